import { createHmac, timingSafeEqual } from 'node:crypto';
import { repositoryOf, type HostRepository, type SourceHostRepository } from './client';

// What the source-host receiver decides without I/O: whether a delivery is signed with the
// integration's webhook secret, and what each event asks of Shipyard
// (docs/source-host-receiver.md).

/** `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, as the host sends it. */
const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * Whether `header` is the HMAC-SHA256 of `body` (the bytes received) under `secret`. The digests
 * are compared in constant time, on buffers of equal length, so the time taken says nothing of
 * how much of a forged signature was right.
 */
export function signatureMatches(secret: string, body: Buffer, header: string | undefined): boolean {
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = SIGNATURE.exec(header ?? '')?.[1];
  if (!given) return false;
  const received = Buffer.from(given, 'hex');
  return received.length === expected.length && timingSafeEqual(received, expected);
}

/** A repository as a payload shows it: the host's fields, any of them but the names left out. */
export type PayloadRepository = Pick<HostRepository, 'full_name' | 'name' | 'owner'> & Partial<HostRepository>;

export interface PushPayload {
  ref: string;
  deleted?: boolean;
  repository: PayloadRepository;
  commits?: { added?: string[]; removed?: string[]; modified?: string[] }[];
}

/** The `repository` event's actions that change what Shipyard keeps of a repository. */
export const REPOSITORY_ACTIONS = [
  'created',
  'edited',
  'renamed',
  'transferred',
  'archived',
  'unarchived',
  'privatized',
  'publicized',
  'deleted',
] as const;
export type RepositoryAction = (typeof REPOSITORY_ACTIONS)[number];

export interface RepositoryPayload {
  action: string;
  repository: PayloadRepository;
  /** What a rename or a transfer changed: the name, or the owner, before. */
  changes?: {
    repository?: { name?: { from?: string } };
    owner?: { from?: { user?: { login?: string }; organization?: { login?: string } } };
  };
}

/** What a delivery asks of Shipyard. */
export type ReceiverEvent =
  | { kind: 'ping' }
  /** Documentation changed on the default branch: that repository is crawled again. */
  | { kind: 'push'; repository: SourceHostRepository; crawl: boolean }
  | { kind: 'repository'; action: RepositoryAction; repository: SourceHostRepository; previousFullName?: string }
  | { kind: 'ignored' };

/** A README (any extension, any folder) or a Markdown file: what the crawler indexes. */
const DOCUMENTATION = /(^|\/)readme(\.[^/]*)?$|\.(md|markdown)$/i;

export const isDocumentationPath = (path: string) => DOCUMENTATION.test(path);

/**
 * Whether a push changes documentation the crawler reads: a commit on the default branch (the
 * branch the crawler reads) adding, changing or removing a README or a Markdown file. A
 * branch's deletion changes nothing.
 */
export function pushChangesDocumentation(push: PushPayload, defaultBranch: string): boolean {
  if (push.deleted || push.ref !== `refs/heads/${defaultBranch}`) return false;
  return (push.commits ?? []).some((commit) =>
    [commit.added, commit.modified, commit.removed].some((paths) => (paths ?? []).some(isDocumentationPath)),
  );
}

/** The full name a repository had before a rename or a transfer; undefined for other actions. */
function previousFullName(payload: RepositoryPayload): string | undefined {
  const { repository, changes } = payload;
  if (payload.action === 'renamed') {
    const from = changes?.repository?.name?.from;
    return from ? `${repository.owner.login}/${from}` : undefined;
  }
  if (payload.action === 'transferred') {
    const from = changes?.owner?.from?.user?.login ?? changes?.owner?.from?.organization?.login;
    return from ? `${from}/${repository.name}` : undefined;
  }
  return undefined;
}

/** A delivery's event (`X-Hub-Event`) and its payload (already checked against its schema) as what to do. */
export function receiverEvent(
  event: 'ping' | 'push' | 'repository' | string,
  payload: PushPayload | RepositoryPayload | unknown,
): ReceiverEvent {
  if (event === 'ping') return { kind: 'ping' };
  if (event === 'push') {
    const push = payload as PushPayload;
    const repository = repositoryOf(push.repository);
    return { kind: 'push', repository, crawl: pushChangesDocumentation(push, repository.default_branch) };
  }
  if (event === 'repository') {
    const change = payload as RepositoryPayload;
    if (!(REPOSITORY_ACTIONS as readonly string[]).includes(change.action)) return { kind: 'ignored' };
    const previous = previousFullName(change);
    return {
      kind: 'repository',
      action: change.action as RepositoryAction,
      repository: repositoryOf(change.repository),
      ...(previous && previous !== change.repository.full_name && { previousFullName: previous }),
    };
  }
  return { kind: 'ignored' };
}
