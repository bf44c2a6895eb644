//! The inspector panel (right sidebar). Mount `<Inspector />` (no required props).
//!
//! Tool schemas: call `setToolSchemas(offers)` with what `commands.serverOffers()`
//! returns (tools with `input_schema`, resources, prompts) — again whenever the
//! servers change. Or pass `<Inspector offers={…} />`, which overrides that store.

export { Inspector, focusField, type InspectorProps } from './Inspector';
export { setToolSchemas, offersStore, useOffers, findTool, type Offer, type OfferedTool, type OfferedPrompt, type OfferedResource } from './offers';
export { namesInScope, runsBefore, dependencies, knownOutputFields, type ScopeName, type ScopeKind, type ScopeOptions } from './scope';
export { TemplateInput, TemplateField, ScopeNames, type TemplateInputProps } from './TemplateInput';
export { templateContext, suggest, applyCompletion, hasTemplate } from './completion';
export { EvalFreeValidator, evalFreeValidator } from './validator';
export { CodeEditor, JsonField, editorOf } from './CodeEditor';
export { ArgsForm } from './ArgsForm';
