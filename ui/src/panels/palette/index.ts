//! The palette: step kinds and every server's tools, resources and prompts.

export { addFromTemplate, Palette } from './Palette';
export {
  exampleValue,
  KIND_ITEMS,
  matches,
  promptTemplate,
  requiredArgs,
  resourceTemplate,
  toolTemplate,
  type KindItem,
} from './templates';
