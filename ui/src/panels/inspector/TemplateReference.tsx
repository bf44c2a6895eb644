//! The template reference, in the studio (docs/blueprint.md "Templates", short): the
//! names in scope, the rules, and JMESPath examples. Linked from the template editor.

import { Modal } from '../files/Modal';

const NAMES: [string, string][] = [
  ['inputs', 'the run’s inputs'],
  ['<step id>', 'that step’s output (shorthand)'],
  ['steps.<id>', '{ output, status, error, attempts, duration_ms }'],
  ['prev', 'the output of the single step this one runs after'],
  ['item, index', 'in a loop body: the loop variable (renamed by `as`) and its index'],
  ['error', 'in a fallback: { step, message, code }'],
  ['saved', 'values saved by earlier runs (`save`)'],
  ['run', '{ id, blueprint, started_at }'],
];

const EXAMPLES: [string, string][] = [
  ['{{ fetch.items }}', 'a field; exactly one template keeps the type (a list stays a list)'],
  ['Hello {{ item }}!', 'text around templates gives text (other values as compact JSON)'],
  ['{{ length(fetch.items) }}', 'JMESPath functions: length, join, contains, sort_by, keys, …'],
  ["{{ fetch.items[?kind == 'pod'].name }}", 'filter a list, then project a field'],
  ['{{ fetch.items[*].name }}', 'every item’s name'],
  ["{{ join(', ', fetch.names) }}", 'a list as one string'],
  ["{{ fetch.note || 'none' }}", 'a default: an expression that is not a plain path may be null'],
  ['\\{{ not a template', 'a literal {{'],
];

export function TemplateReference({ onClose }: { onClose(): void }) {
  return (
    <Modal title="Template reference" onClose={onClose} testId="template-reference" className="template-reference">
      <p>
        Any string in a step’s arguments, <code>uri</code>, <code>value</code>, <code>when</code>, <code>for_each</code>, <code>collect</code> or the
        blueprint’s <code>output</code> may hold <code>{'{{ expression }}'}</code>, a JMESPath expression over these names:
      </p>
      <Pairs rows={NAMES} />
      <p>
        <strong>Strict paths.</strong> A plain path (<code>a.b[0].c</code>) whose key is missing fails the step before anything is called
        (<code>TEMPLATE_UNRESOLVED</code>, naming the keys that exist). Anything else follows JMESPath: absent is null.
      </p>
      <Pairs rows={EXAMPLES} />
      <p className="muted">The whole format: docs/blueprint.md, “Templates”.</p>
    </Modal>
  );
}

/** Rows of code and what it means. */
function Pairs({ rows }: { rows: readonly [string, string][] }) {
  return (
    <table className="te-ref-table">
      <tbody>
        {rows.map(([code, what]) => (
          <tr key={code}>
            <td>
              <code>{code}</code>
            </td>
            <td>{what}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
