/**
 * What a lab file's `addons:` may name and what each needs beside it. The built-in addons are listed
 * once, in src/addons/registry.ts; config/ sits below addons/ and cannot import it (not even a type),
 * so the composition root (src/cli/main.ts, src/bench/main.ts, the tests) provides the registry's
 * vocabulary here, lazily: it is loaded only when a lab file is parsed.
 */
export interface AddonVocabulary {
  /** The addons a lab may name, in the order errors list them. */
  readonly names: readonly string[];
  /** What `name` needs in the same lab; undefined when it needs nothing or is no addon of `names`. */
  requires(name: string): AddonRequirement | undefined;
}

export interface AddonRequirement {
  readonly addons: readonly string[];
  /** Why, as the lab file's error says it (e.g. "it takes its credentials from managed-serviceaccount"). */
  readonly why: string;
}

let provider: (() => Promise<AddonVocabulary>) | undefined;

/** Called once by the composition root, before any lab file is read. */
export function provideAddonVocabulary(load: () => Promise<AddonVocabulary>): void {
  provider = load;
}

/** The vocabulary the composition root provided; a program that provided none is a bug, never "any name goes". */
export async function loadAddonVocabulary(): Promise<AddonVocabulary> {
  if (!provider)
    throw new Error(
      'internal: no addon vocabulary was provided, so a lab file cannot be checked; the entry point must call provideAddonVocabulary ' +
        '(src/config/addon-vocabulary.ts) with the registry of src/addons/registry.ts, as src/cli/main.ts does',
    );
  return provider();
}
