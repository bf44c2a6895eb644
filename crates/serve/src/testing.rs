//! `test_workflow`: an agent tests what it wrote without any server — a finished run of
//! the blueprint saved as a test (`save_run`: its record becomes a cassette, as the
//! studio's "Save as test" does), then every test of the blueprint replayed over its
//! cassette against the stored blueprint or the `blueprint` given (a draft not saved
//! yet). The tests live in the data folder's `tests/<id>/`, where `mcpflow test` runs
//! them too (docs/testing.md).

use super::call::{Call, app_failure, failure, string_arg};
use serde_json::{Value, json};

impl Call<'_> {
    pub(super) async fn test_workflow(&self, args: &Value) -> Result<Value, Value> {
        let id = string_arg(args, "id")?;
        let doc = match args.get("blueprint") {
            Some(doc) => {
                if doc.get("id").and_then(Value::as_str) != Some(id.as_str()) {
                    return Err(failure(
                        "BAD_REQUEST",
                        format!(
                            "`blueprint.id` must be `{id}`, the id whose tests run; or leave `blueprint` out to test the stored one"
                        ),
                    ));
                }
                doc.clone()
            }
            None => self.app.blueprint(&id).map_err(|e| app_failure(&e))?.json,
        };
        let mut answer = json!({ "id": id });
        if let Some(run_id) = args.get("save_run").and_then(Value::as_str) {
            let saved = self.app.save_run_as_test(&doc, run_id).await.map_err(|e| app_failure(&e))?;
            answer["saved"] = json!({ "test": saved.name, "exchanges": saved.exchanges, "from_run": run_id });
        }
        let outcomes = self.app.run_blueprint_tests(&doc).await.map_err(|e| app_failure(&e))?;
        if outcomes.is_empty() {
            return Err(failure(
                "NO_TESTS",
                format!(
                    "`{id}` has no tests yet: run it once (run_workflow), then call test_workflow with save_run: \
                     the run's id"
                ),
            ));
        }
        let failed = outcomes.iter().filter(|o| o.failure.is_some()).count();
        let tests: Vec<Value> = outcomes
            .iter()
            .map(|o| match &o.failure {
                None => json!({ "test": o.name, "passed": true }),
                Some(why) => json!({ "test": o.name, "passed": false, "failure": why }),
            })
            .collect();
        answer["passed"] = json!(outcomes.len() - failed);
        answer["failed"] = json!(failed);
        answer["tests"] = json!(tests);
        if failed > 0 {
            answer["error"] =
                json!({ "code": "TESTS_FAILED", "message": format!("{failed} of {} test(s) failed", outcomes.len()) });
            return Err(answer);
        }
        Ok(answer)
    }
}
