import { DefaultFailureConverter } from '@temporalio/common';

// Loaded by its path (./payloadCodec.ts), as the SDK requires, so that workers also bundle it
// into the workflow code. Failure messages and stack traces hold URLs and response snippets:
// this moves them into an encoded payload, which the payload codec then encrypts.
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
