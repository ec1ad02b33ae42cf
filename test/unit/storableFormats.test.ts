import { compileBody } from '../../api/http/validation';

// The request validators hold `date` and `uuid` to what PostgreSQL stores, so a value that JSON
// Schema's formats allow but the database refuses is the caller's 400, never a 500.

const validate = compileBody({
  type: 'object',
  properties: { day: { type: 'string', format: 'date' }, id: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
});
const accepts = (body: object) => {
  try {
    validate(body);
    return true;
  } catch {
    return false;
  }
};

test('a date of year 0000 (no such year in PostgreSQL) is refused; other real dates are taken', () => {
  expect(accepts({ day: '0000-01-01' })).toBe(false);
  expect(accepts({ day: '2026-02-30' })).toBe(false);
  expect(accepts({ day: '0001-01-01' })).toBe(true);
  expect(accepts({ day: '2026-11-27' })).toBe(true);
});

test('a uuid with the urn:uuid: prefix is refused; the plain form in either case is taken', () => {
  expect(accepts({ id: 'urn:uuid:3f1c1b0e-1111-4111-8111-111111111111' })).toBe(false);
  expect(accepts({ id: '3F1C1B0E-1111-4111-8111-111111111111' })).toBe(true);
});
