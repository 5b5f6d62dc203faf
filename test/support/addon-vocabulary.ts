import { addonVocabulary } from '../../src/addons/registry.js';
import { provideAddonVocabulary } from '../../src/config/addon-vocabulary.js';

/**
 * Imported for its effect by tests that read lab files through validateLabFile/loadLabConfig: what
 * src/cli/main.ts does for the program, the registry's addons as config/ checks a lab file against them.
 */
provideAddonVocabulary(async () => addonVocabulary());
