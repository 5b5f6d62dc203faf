/**
 * Characters that do not print as themselves: controls (C0, DEL, C1: they move
 * the cursor, clear or recolour a terminal), invisible format characters (BOM,
 * zero-width and bidirectional marks), line and paragraph separators, and
 * unpaired surrogates.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/**
 * `text` with every unprintable character as a `\uXXXX` escape, for messages
 * that quote what a user's file holds: what is printed is what is there, and a
 * file cannot drive the terminal its error is shown on.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
