//! The example blueprints of workflows/ as text, for tests (read through Vite, so no
//! file-system code is needed).

const files = import.meta.glob('../../../workflows/*.blueprint.json', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

/** `{ name: text }` for every example, e.g. `everything-tour` → the file's text. */
export const EXAMPLES: Record<string, string> = Object.fromEntries(
  Object.entries(files).map(([path, text]) => [path.replace(/^.*\/(.*)\.blueprint\.json$/, '$1'), text]),
);

export function example(name: string): string {
  const text = EXAMPLES[name];
  if (text === undefined) throw new Error(`no example ${name}`);
  return text;
}
