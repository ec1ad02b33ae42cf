import { renderTemplate } from '../../activities/forge/template';
import { checkRunParameters, moldProblems } from '../../api/forge/moldRules';
import type { MoldParameter } from '../../api/forge/schemas';

// The pure rules of forge: action templating, mold definition checks, run parameter checks.

describe('renderTemplate', () => {
  const parameters = { service: 'payments', replicas: 3, tags: ['a', 'b'], path: '../admin' };

  test('a string that is exactly one reference keeps the value and its type', () => {
    expect(renderTemplate({ n: '${{ parameters.replicas }}', t: '${{parameters.tags}}' }, parameters)).toEqual({ n: 3, t: ['a', 'b'] });
  });

  test('inside text, values are written out (lists as JSON); unknown parameters become empty', () => {
    expect(renderTemplate(['deploy ${{ parameters.service }} x${{ parameters.replicas }}', '${{ parameters.tags }}!', 'x${{ parameters.nope }}y'], parameters)).toEqual([
      'deploy payments x3',
      '["a","b"]!',
      'xy',
    ]);
  });

  test('with an escape, every inserted value is escaped, even a whole-string reference', () => {
    expect(renderTemplate('/repos/${{ parameters.path }}/issues', parameters, encodeURIComponent)).toBe('/repos/..%2Fadmin/issues');
    expect(renderTemplate('${{ parameters.replicas }}', parameters, encodeURIComponent)).toBe('3');
  });

  test('values that look like references are not expanded again', () => {
    expect(renderTemplate('${{ parameters.x }}-', { x: '${{ parameters.y }}', y: 'no' })).toBe('${{ parameters.y }}-');
  });
});

describe('moldProblems', () => {
  test('select parameters need options, others must not have them; defaults must fit; names are unique', () => {
    const problems = moldProblems({
      parameters: [
        { name: 'env', type: 'select' },
        { name: 'count', type: 'number', default: 'three', options: ['x'] },
        { name: 'env', type: 'string' },
      ] as MoldParameter[],
      actions: [
        { name: 'a', type: 'script', requires_approval: false },
        { name: 'a', type: 'approval', requires_approval: false },
      ],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        { field: 'body.parameters', message: 'parameter "env" is defined more than once' },
        { field: 'body.parameters.0.options', message: 'a select parameter needs options' },
        { field: 'body.parameters.1.options', message: 'only select and multi-select parameters take options' },
        { field: 'body.parameters.1.default', message: 'default must be a number' },
        { field: 'body.actions', message: 'action "a" is defined more than once' },
      ]),
    );
    expect(problems).toHaveLength(5);
  });

  test('a well-formed mold has no problems', () => {
    expect(moldProblems({ parameters: [{ name: 'env', type: 'multi-select', required: false, options: ['dev', 'prod'], default: ['dev'] }], actions: [] })).toEqual([]);
  });
});

describe('checkRunParameters', () => {
  const definitions = [
    { name: 'service', type: 'string', required: true },
    { name: 'replicas', type: 'number', default: 2 },
    { name: 'env', type: 'select', options: ['dev', 'prod'] },
    { name: 'regions', type: 'multi-select', options: ['eu', 'us'] },
    { name: 'dry_run', type: 'boolean' },
  ] as MoldParameter[];

  test('fills in defaults and accepts values of the right type', () => {
    expect(checkRunParameters(definitions, { service: 'api', env: 'prod', regions: ['eu'], dry_run: false })).toEqual({
      values: { service: 'api', replicas: 2, env: 'prod', regions: ['eu'], dry_run: false },
      problems: [],
    });
  });

  test('reports unknown, missing, mistyped and out-of-options values, one detail per field', () => {
    const { problems } = checkRunParameters(definitions, { replicas: 'many', env: 'staging', regions: ['eu', 'mars'], dry_run: 'yes', extra: 1 });
    expect(problems).toEqual([
      { field: 'parameters.extra', message: 'is not a parameter of this mold' },
      { field: 'parameters.service', message: 'is required' },
      { field: 'parameters.replicas', message: 'must be a number' },
      { field: 'parameters.env', message: 'must be one of: dev, prod' },
      { field: 'parameters.regions', message: 'must be a list drawn from: eu, us' },
      { field: 'parameters.dry_run', message: 'must be a boolean' },
    ]);
  });
});
