import { resourceLimits } from '../../core/license/editions';

test('a tenant without a license has the free limits: one cluster, five nodes', () => {
  expect(resourceLimits(undefined, 0)).toEqual({ clusters: 1, nodes: 5 });
});

test("a license's own counts replace its edition's; 0 keeps the edition's", () => {
  expect(resourceLimits({ edition: 'standard', clusters: 5, nodes: 0 }, 0)).toEqual({ clusters: 5, nodes: 0 });
  expect(resourceLimits({ edition: 'beta', clusters: 0, nodes: 0 }, 0)).toEqual({ clusters: 3, nodes: 0 });
});

test('approved clusters add to a counted limit and leave an unlimited one unlimited', () => {
  expect(resourceLimits(undefined, 2)).toEqual({ clusters: 3, nodes: 5 });
  expect(resourceLimits({ edition: 'airgapped', clusters: 0, nodes: 0 }, 2)).toEqual({ clusters: 0, nodes: 0 });
});
