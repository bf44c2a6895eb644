//! The mcpflow blueprint format v1: the types, their JSON Schema, a reader that keeps
//! source positions, two-tier validation and `{{ }}` templates over JMESPath.
//!
//! This crate is pure: no IO, no clocks, no processes. Everything that needs the outside
//! world (which tools a server has) comes in through traits such as [`ToolCatalog`].
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

pub mod ask;
pub mod catalog;
pub mod decode;
pub mod diagnostic;
pub mod inputs;
pub mod limits;
pub mod lock;
pub mod model;
pub mod plan;
mod reads;
pub mod schema;
pub mod source;
pub mod template;
pub mod types;
pub mod validate;

pub use catalog::{JsonCatalog, ServerInfo, ServerStatus, ToolCatalog, ToolInfo, WorkflowCatalog};
pub use diagnostic::{Code, Diagnostic, Level, Position};
pub use model::*;
pub use plan::{Plan, PlannedStep, StepIdx, StepList, StepTemplates};
pub use template::{MapScope, RenderError, Scope, Template};
pub use validate::{Options, Report, check_bytes, check_many, check_value, validate};
