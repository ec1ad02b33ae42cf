import type { ManifestType } from '../catalog/types';
import { ApiError, type ErrorCode, type ErrorDetail } from '../errors';
import { renderYaml, type ReadLimits } from './format';
import { readDocumentOf, readManifestDocuments } from './manifestRules';
import { analyzeManifest, type QualityReport } from './qualityRules';
import type { ReadDocument } from './types';

// The task a parser thread runs (readPool.ts): YAML in, plain data out. Everything that walks the
// source runs here, off the API's event loop: parsing, the budgets, validation, conversion, the
// quality analysis and rendering, and resolving positions (a Locate closure cannot cross threads).

export interface ReadTask {
  content: string;
  format?: ManifestType;
  /** What else to compute besides the documents. */
  with?: 'quality' | 'rendered';
  limits: ReadLimits;
}

export interface ReadResult {
  documents: ReadDocument[];
  /** Per document, with `with: 'quality'`: null when it cannot be read as a manifest. */
  quality?: (QualityReport | null)[];
  /** With `with: 'rendered'`: every accepted manifest as one YAML stream. */
  rendered?: string;
}

/** A refusal of the whole content (too deep, too many documents), as plain data. */
export interface ReadRefusal {
  refused: { code: ErrorCode; message: string; details: ErrorDetail[] };
}

export default function readManifests(task: ReadTask): ReadResult | ReadRefusal {
  try {
    const documents = readManifestDocuments(task.content, task.format, task.limits);
    return {
      documents: documents.map(readDocumentOf),
      ...(task.with === 'quality' && {
        quality: documents.map((d) => (d.draft === undefined ? null : analyzeManifest(d.draft, d.problems))),
      }),
      ...(task.with === 'rendered' && {
        rendered: renderYaml(documents.flatMap((document) => (document.manifest ? [document.manifest] : []))),
      }),
    };
  } catch (err) {
    if (err instanceof ApiError) return { refused: { code: err.code, message: err.message, details: err.details } };
    throw err;
  }
}
