import { describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE, ocmImage } from '../../src/images/catalogue.js';
import { prepullOrder } from '../../src/images/registry/prepull.js';

const v = 'v1.2.1';
const ocm = (name: Parameters<typeof ocmImage>[0]) => ocmImage(name, v);
const labImages = [OCM_LAB_IMAGE, ocm('registration-operator'), ocm('registration'), ocm('work'), ocm('placement'), ocm('addon-manager'), 'quay.io/x/addon:1'];

describe('kind: what a new node pulls while OCM installs', () => {
  it("the hub: OCM's five images first, then ours and the rest", () => {
    expect(prepullOrder(labImages, v, true)).toEqual([
      ocm('registration-operator'),
      ocm('registration'),
      ocm('work'),
      ocm('placement'),
      ocm('addon-manager'),
      OCM_LAB_IMAGE,
      'quay.io/x/addon:1',
    ]);
  });

  it("a spoke: only the klusterlet's three OCM images, then ours and the rest", () => {
    expect(prepullOrder(labImages, v, false)).toEqual([ocm('registration-operator'), ocm('registration'), ocm('work'), OCM_LAB_IMAGE, 'quay.io/x/addon:1']);
  });

  it("pulls only the lab's images: OCM images it lacks are left out, another OCM version's goes with the rest", () => {
    expect(prepullOrder([OCM_LAB_IMAGE, ocmImage('registration', 'v1.1.0')], v, true)).toEqual([OCM_LAB_IMAGE, ocmImage('registration', 'v1.1.0')]);
  });
});
