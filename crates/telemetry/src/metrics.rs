//! The metrics (issue 19, item 4), built once per [`Otel`](crate::Otel): what each
//! [`Measure`] records. No run ids or arguments go on metrics, only bounded attributes.

use crate::gate::Shared;
use mcpflow_engine::telemetry::Measure;
use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};
use std::sync::Arc;

/// Seconds; the semantic conventions' buckets for MCP operations, used for runs and steps too.
const BUCKETS: [f64; 14] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

#[derive(Debug)]
pub(crate) struct Instruments {
    operation: Histogram<f64>,
    runs: Counter<u64>,
    run_duration: Histogram<f64>,
    step_duration: Histogram<f64>,
    active: UpDownCounter<i64>,
    retries: Counter<u64>,
}

impl Instruments {
    pub(crate) fn new(meter: &Meter, shared: Arc<Shared>) -> Instruments {
        let seconds = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(BUCKETS.to_vec())
                .build()
        };
        // Registered with the meter, which calls it at each export.
        meter
            .u64_observable_counter("mcpflow.telemetry.spans.dropped")
            .with_unit("{span}")
            .with_description("Spans dropped because the queue to the collector was full")
            .with_callback(move |observer| observer.observe(shared.dropped(), &[]))
            .build();
        Instruments {
            operation: seconds("mcp.client.operation.duration", "The duration of an MCP request as the client sees it"),
            runs: meter
                .u64_counter("mcpflow.runs")
                .with_unit("{run}")
                .with_description("Runs ended, by status")
                .build(),
            run_duration: seconds("mcpflow.run.duration", "The duration of a run"),
            step_duration: seconds("mcpflow.step.duration", "The duration of a step attempt"),
            active: meter
                .i64_up_down_counter("mcpflow.client.active_requests")
                .with_unit("{request}")
                .with_description("MCP requests in flight")
                .build(),
            retries: meter
                .u64_counter("mcpflow.step.retries")
                .with_unit("{retry}")
                .with_description("Step retries")
                .build(),
        }
    }

    pub(crate) fn record(&self, measure: Measure) {
        match measure {
            Measure::RunEnded { blueprint, trigger, status, duration } => {
                let attrs = [
                    KeyValue::new("mcpflow.run.status", status.as_str()),
                    KeyValue::new("mcpflow.run.trigger", trigger),
                    KeyValue::new("mcpflow.blueprint.id", blueprint),
                ];
                self.runs.add(1, &attrs);
                self.run_duration.record(duration.as_secs_f64(), &attrs);
            }
            Measure::StepEnded { blueprint, step, kind, outcome, error, duration } => {
                let mut attrs = vec![
                    KeyValue::new("mcpflow.step.kind", kind),
                    KeyValue::new("mcpflow.step.outcome", outcome),
                    KeyValue::new("mcpflow.blueprint.id", blueprint),
                    KeyValue::new("mcpflow.step.id", step),
                ];
                attrs.extend(error.map(|e| KeyValue::new("error.type", e)));
                self.step_duration.record(duration.as_secs_f64(), &attrs);
            }
            Measure::Retry { blueprint, kind, error } => {
                let attrs = [
                    KeyValue::new("mcpflow.step.kind", kind),
                    KeyValue::new("error.type", error),
                    KeyValue::new("mcpflow.blueprint.id", blueprint),
                ];
                self.retries.add(1, &attrs);
            }
            Measure::McpCall { duration, attrs } => {
                let attrs = attrs.into_iter().map(|(k, v)| crate::key_value(k, v)).collect::<Vec<_>>();
                self.operation.record(duration.as_secs_f64(), &attrs);
            }
            Measure::InFlight { method, server, delta } => {
                let attrs = [KeyValue::new("mcp.method.name", method), KeyValue::new("mcpflow.server.name", server)];
                self.active.add(delta, &attrs);
            }
            // A measure added to the engine later and not recorded here yet.
            _ => {}
        }
    }
}
