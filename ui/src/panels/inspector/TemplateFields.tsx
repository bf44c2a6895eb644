//! The values of the last run beside the template editor, as n8n's input panel: one
//! tree per name in scope at the step (its steps' outputs, `inputs` …), whose keys drag
//! into the template as `{{ name.path }}` (see shared/field-drop.ts).
//!
//! Test hook: `template-fields`, one `template-fields-<name>` per name.

import type { Json } from '../../doc';
import { JsonView } from '../run/JsonView';
import type { ScopeName } from './scope';

export function TemplateFields({ names, scope }: { names: readonly ScopeName[]; scope: Record<string, Json> | null | undefined }) {
  const top = new Set(names.filter((n) => !n.name.includes('.')).map((n) => n.name));
  const shown = scope ? Object.keys(scope).filter((k) => top.has(k)) : [];
  if (!shown.length) return null;
  return (
    <div className="te-fields" data-testid="template-fields">
      <div className="te-fields-head">
        From the last run <span className="tpl-preview-note">— drag a field into the template</span>
      </div>
      {shown.map((name) => (
        <div key={name} data-testid={`template-fields-${name}`}>
          <JsonView value={scope![name]} title={name} step={name} />
        </div>
      ))}
    </div>
  );
}
