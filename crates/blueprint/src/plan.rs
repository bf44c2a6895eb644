//! The analyzed form of a valid blueprint: every step in one flat arena with its list,
//! its resolved dependencies and its compiled templates. Validation produces it; the
//! engine runs it.

use crate::model::Step;
use crate::template::Template;
use std::collections::HashMap;

/// Index of a step in [`Plan::steps`].
pub type StepIdx = usize;

#[derive(Debug, Clone)]
pub struct Plan {
    /// Every step, loop bodies included, in document (pre-)order.
    pub steps: Vec<PlannedStep>,
    /// Step lists: `lists[0]` is the top level, then one per loop body.
    pub lists: Vec<StepList>,
    pub by_id: HashMap<String, StepIdx>,
    /// The run's output template; `None` means "the output of the last step".
    pub output: Option<Template>,
}

/// One list of steps: the top level or a loop body.
#[derive(Debug, Clone)]
pub struct StepList {
    /// The loop whose body this is (`None` for the top level).
    pub owner: Option<StepIdx>,
    pub members: Vec<StepIdx>,
    /// JSON Pointer of the array.
    pub pointer: String,
}

#[derive(Debug, Clone)]
pub struct PlannedStep {
    /// The step as written; a loop's `steps` are left empty (see `body`).
    pub step: Step,
    pub pointer: String,
    /// Index into [`Plan::lists`].
    pub list: usize,
    /// Position within its list.
    pub position: usize,
    /// Steps (of the same list) this one runs after, explicit and implicit.
    pub deps: Vec<StepIdx>,
    /// The switch that routes to this step, if it is a switch target.
    pub switch: Option<StepIdx>,
    /// This step's fallback.
    pub fallback: Option<StepIdx>,
    /// The step this one is the fallback of (it then runs only as a fallback).
    pub fallback_of: Option<StepIdx>,
    /// For loops: the list index of the body.
    pub body: Option<usize>,
    pub templates: StepTemplates,
}

/// The compiled templates of a step, by kind.
#[derive(Debug, Clone)]
pub enum StepTemplates {
    Tool { args: Option<Template> },
    Resource { uri: Template },
    Prompt { args: Option<Template> },
    Transform { value: Template },
    Switch { when: Vec<Template> },
    Loop { for_each: Option<Template>, until: Option<Template>, collect: Option<Template> },
    Workflow { args: Option<Template> },
    Wait,
    Input { prompt: Template, default: Option<Template> },
}

impl StepTemplates {
    /// Each template with the field pointer (relative to the step) it came from.
    pub fn fields(&self) -> Vec<(String, &Template)> {
        let mut out: Vec<(String, &Template)> = Vec::new();
        fn add<'t>(out: &mut Vec<(String, &'t Template)>, name: &str, t: &'t Option<Template>) {
            if let Some(t) = t {
                out.push((format!("/{name}"), t));
            }
        }
        match self {
            StepTemplates::Tool { args } | StepTemplates::Prompt { args } | StepTemplates::Workflow { args } => {
                add(&mut out, "args", args)
            }
            StepTemplates::Resource { uri } => out.push(("/uri".into(), uri)),
            StepTemplates::Transform { value } => out.push(("/value".into(), value)),
            StepTemplates::Switch { when } => {
                for (i, t) in when.iter().enumerate() {
                    out.push((format!("/cases/{i}/when"), t));
                }
            }
            StepTemplates::Loop { for_each, until, collect } => {
                add(&mut out, "for_each", for_each);
                add(&mut out, "until", until);
                add(&mut out, "collect", collect);
            }
            StepTemplates::Wait => {}
            StepTemplates::Input { prompt, default } => {
                out.push(("/prompt".into(), prompt));
                add(&mut out, "default", default);
            }
        }
        out
    }
}
