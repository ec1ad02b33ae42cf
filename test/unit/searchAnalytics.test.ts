import { recordedQuery } from '../../search/analytics';

// How a search is recorded for analytics: grouped by its normalised text, credentials masked.

test('queries are trimmed, lowercased and their spaces folded, so the same question counts once', () => {
  expect(recordedQuery('  Payments   API ')).toBe('payments api');
});

test('a long unbroken token (an API key, a JWT, a hash) is masked; long service ids and words are kept', () => {
  const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlc2lnbmF0dXJl';
  expect(recordedQuery(`owner ${jwt}`)).toBe('owner [redacted]');
  expect(recordedQuery(`key ${'a1'.repeat(20)} now`)).toBe('key [redacted] now');
  expect(recordedQuery(`sha ${'0f'.repeat(32)}`)).toBe('sha [redacted]');
  expect(recordedQuery('payments-api-v2-eu-west-1-production-cluster')).toBe(
    'payments-api-v2-eu-west-1-production-cluster',
  );
  expect(recordedQuery('pneumonoultramicroscopicsilicovolcanoconiosis')).toBe(
    'pneumonoultramicroscopicsilicovolcanoconiosis',
  );
});
