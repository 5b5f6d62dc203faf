/**
 * The steps an `up` finished, as its progress printed them (`✔ <title> [<duration>]`), in order:
 * where a cold `up`'s time went, read from its own output.
 */
export function finishedSteps(output: string): string[] {
  return output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^✔ .+ \[[\dhms ]+\]$/.test(line))
    .map((line) => line.slice(2));
}
