import { parameterReferences, renderTemplate, TemplateTooLargeError } from '../../core/forge/template';
import { checkRunParameters, moldProblems } from '../../core/forge/moldRules';
import { withActionDefaults, type MoldAction, type MoldParameter } from '../../core/forge/types';

// The pure rules of forge: action templating, mold definition checks, run parameter checks.

describe('renderTemplate', () => {
  const parameters = { service: 'payments', replicas: 3, tags: ['a', 'b'], path: '../admin' };
  const roomy = { maxBytes: 1024 * 1024, what: 'the body' };
  const escaped = { ...roomy, escape: encodeURIComponent };

  test('a string that is exactly one reference keeps the value and its type', () => {
    expect(renderTemplate({ n: '${{ parameters.replicas }}', t: '${{parameters.tags}}' }, parameters, roomy)).toEqual({
      n: 3,
      t: ['a', 'b'],
    });
  });

  test('inside text, values are written out (lists as JSON); unknown parameters become empty', () => {
    expect(
      renderTemplate(
        [
          'deploy ${{ parameters.service }} x${{ parameters.replicas }}',
          '${{ parameters.tags }}!',
          'x${{ parameters.nope }}y',
        ],
        parameters,
        roomy,
      ),
    ).toEqual(['deploy payments x3', '["a","b"]!', 'xy']);
  });

  test('with an escape, every inserted value is escaped, even a whole-string reference', () => {
    expect(renderTemplate('/repos/${{ parameters.path }}/issues', parameters, escaped)).toBe(
      '/repos/..%2Fadmin/issues',
    );
    expect(renderTemplate('${{ parameters.replicas }}', parameters, escaped)).toBe('3');
  });

  test('values that look like references are not expanded again', () => {
    expect(renderTemplate('${{ parameters.x }}-', { x: '${{ parameters.y }}', y: 'no' }, roomy)).toBe(
      '${{ parameters.y }}-',
    );
  });

  test('a body that references a large value many times stops at its cap with an error naming the limit', () => {
    const big = { text: 'x'.repeat(10_000) };
    const repeated = '${{ parameters.big }}'.repeat(1_000);
    const stops = (template: unknown) => () => renderTemplate(template, { big }, roomy);
    for (const template of [{ note: repeated }, { list: Array(1_000).fill('${{ parameters.big }}') }]) {
      expect(stops(template)).toThrow(TemplateTooLargeError);
      expect(stops(template)).toThrow('the body exceeds its limit of 1048576 bytes once its parameters are filled in');
    }
    // Just under the cap is fine.
    expect(renderTemplate({ list: Array(100).fill('${{ parameters.big }}') }, { big }, roomy)).toEqual({
      list: Array(100).fill(big),
    });
  });

  test('a template over its cap is a 413 where a request caused it', () => {
    expect(() => renderTemplate('${{ parameters.service }}', parameters, { maxBytes: 4, what: 'the URL' })).toThrow(
      expect.objectContaining({ status: 413, code: 'PAYLOAD_TOO_LARGE' }),
    );
  });

  test('a config nested 100,000 levels deep is rendered without overflowing the stack, keys in order', () => {
    let deep: unknown = { first: '${{ parameters.service }}', second: 1 };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let rendered = renderTemplate(deep, parameters, { ...roomy, maxBytes: 10 * 1024 * 1024 });
    for (let i = 0; i < 100_000; i++) rendered = (rendered as unknown[])[0];
    expect(rendered).toEqual({ first: 'payments', second: 1 });
    expect(Object.keys(rendered as object)).toEqual(['first', 'second']);
  });

  test('parameterReferences walks a config nested 100,000 levels deep, and stops at its cap on the paths it produces', () => {
    let deep: unknown = '${{ parameters.a }}';
    for (let i = 0; i < 100_000; i++) deep = { k: deep };
    const [found] = parameterReferences(deep);
    expect(found.name).toBe('a');
    expect(found.path).toBe('.k'.repeat(100_000));
    // 1,000 references, each at a path of 200,000 characters: 200 MB of paths.
    const many = Array(1_000).fill('${{ parameters.a }}');
    let wide: unknown = many;
    for (let i = 0; i < 100_000; i++) wide = { k: wide };
    expect(() => parameterReferences(wide)).toThrow(
      'the list of parameter references of this config exceeds its limit of 1048576 bytes once its parameters are filled in',
    );
  });

  test('parameterReferences finds every reference with its path, in nested objects and lists', () => {
    expect(
      parameterReferences({
        url: 'https://x/${{ parameters.a }}/${{parameters.b}}',
        body: { list: ['${{ parameters.c }}'] },
        n: 3,
      }),
    ).toEqual([
      { path: '.url', name: 'a' },
      { path: '.url', name: 'b' },
      { path: '.body.list.0', name: 'c' },
    ]);
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
    expect(
      moldProblems({
        parameters: [
          { name: 'env', type: 'multi-select', required: false, options: ['dev', 'prod'], default: ['dev'] },
        ],
        actions: [],
      }),
    ).toEqual([]);
  });

  const call = (config: Record<string, unknown>): MoldAction => ({
    name: 'call',
    type: 'api-call',
    config,
    requires_approval: false,
  });

  test('an api-call URL must be absolute http(s) or begin with a parameter reference', () => {
    const parameters = [{ name: 'base', type: 'string', required: true }] as MoldParameter[];
    const urls = [
      '/relative',
      'ftp://host/file',
      'not a url',
      'https://${{ parameters.base }}',
      'http://host/ok',
      'https://host/${{ parameters.base }}',
      '${{ parameters.base }}/hooks',
    ];
    const problems = moldProblems({
      parameters,
      actions: urls.map((url, i) => ({ ...call({ url }), name: `call-${i}` })),
    });
    const message = 'must be an absolute http(s) URL or begin with a ${{ parameters.name }} reference';
    expect(problems).toEqual([0, 1, 2, 3].map((i) => ({ field: `body.actions.${i}.config.url`, message })));
  });

  test('every parameter reference in an action config must name a parameter of the mold, reported where it is', () => {
    const problems = moldProblems({
      parameters: [{ name: 'service', type: 'string' }] as MoldParameter[],
      actions: [
        call({ url: 'https://host/${{ parameters.service }}', body: { tags: ['${{ parameters.tag }}'] } }),
        {
          name: 'notify',
          type: 'vcs-host-a-action',
          config: { path: '/repos/${{ parameters.servce }}' },
          requires_approval: false,
        },
      ],
    });
    expect(problems).toEqual([
      { field: 'body.actions.0.config.body.tags.0', message: 'refers to "tag", which is not a parameter of this mold' },
      { field: 'body.actions.1.config.path', message: 'refers to "servce", which is not a parameter of this mold' },
    ]);
  });

  const script = (text: string): MoldAction => ({
    name: 'build',
    type: 'script',
    config: { script: text },
    requires_approval: false,
  });

  test('a script text takes no references, even to defined parameters: the message names the variables to use instead', () => {
    const parameters = [
      { name: 'service', type: 'string' },
      { name: 'release-tag', type: 'string' },
    ] as MoldParameter[];
    const problems = moldProblems({
      parameters,
      actions: [script('deploy ${{ parameters.service }} ${{parameters.release-tag}}; echo ${{ parameters.service }}')],
    });
    expect(problems).toEqual([
      {
        field: 'body.actions.0.config.script',
        message:
          'parameters reach scripts as $PARAM_<NAME> environment variables, not through ${{ }} references: write "$PARAM_SERVICE", "$PARAM_RELEASE_TAG"',
      },
    ]);
    expect(moldProblems({ parameters, actions: [script('deploy "$PARAM_SERVICE" "$PARAM_RELEASE_TAG"')] })).toEqual([]);
  });

  test('parameters whose names reach a script as one variable clash, in molds with a script', () => {
    const parameters = [
      { name: 'release-tag', type: 'string' },
      { name: 'release_tag', type: 'string' },
      { name: 'Release.Tag', type: 'string' },
      { name: 'service', type: 'string' },
    ] as MoldParameter[];
    expect(moldProblems({ parameters, actions: [script('true')] })).toEqual([
      {
        field: 'body.parameters',
        message: 'parameters "release-tag", "release_tag", "Release.Tag" would all reach scripts as $PARAM_RELEASE_TAG',
      },
    ]);
    expect(moldProblems({ parameters, actions: [call({ url: 'https://host/hook' })] })).toEqual([]);
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
    const { problems } = checkRunParameters(definitions, {
      replicas: 'many',
      env: 'staging',
      regions: ['eu', 'mars'],
      dry_run: 'yes',
      extra: 1,
    });
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

describe('action defaults come from the config schemas', () => {
  /** An action as stored before defaults were: its type says they are there, the data lacks them. */
  const stored = (action: object) => action as MoldAction;

  test('a stored action without them gets each type its own (api-call 30 s, script 60 s), keeping values it has', () => {
    expect(
      withActionDefaults(stored({ name: 'a', type: 'api-call', config: { url: 'https://x.test', max_attempts: 5 } })),
    ).toEqual({
      name: 'a',
      type: 'api-call',
      config: { url: 'https://x.test', method: 'GET', timeout_seconds: 30, max_attempts: 5 },
      requires_approval: false,
    });
    expect(withActionDefaults(stored({ name: 's', type: 'script', config: { script: 'true' } })).config).toEqual({
      script: 'true',
      timeout_seconds: 60,
      max_output_bytes: 65_536,
      max_attempts: 3,
    });
    expect(withActionDefaults(stored({ name: 'v', type: 'vcs-host-a-action', config: { path: '/x' } })).config).toEqual(
      expect.objectContaining({ method: 'POST', timeout_seconds: 30 }),
    );
    expect(withActionDefaults(stored({ name: 'g', type: 'approval', requires_approval: true }))).toEqual({
      name: 'g',
      type: 'approval',
      requires_approval: true,
    });
  });
});
