//! A blueprint's tests: save a finished run as a test, list them, run them all over their
//! cassettes with no server (`mcpflow_app::testing`, the code `mcpflow test` runs).

use crate::commands::Studio;
use crate::dto::{CommandError, Json, SavedTestDto, TestDto, TestListDto};
use tauri::State;

type Result<T> = std::result::Result<T, CommandError>;

/// Saves finished run `run_id` of `doc` (the document on the canvas) as a test, in the
/// data folder's `tests/<id>/`. It is replayed first and kept only when it passes.
#[tauri::command]
#[specta::specta]
pub async fn save_run_as_test(studio: State<'_, Studio>, doc: Json, run_id: String) -> Result<SavedTestDto> {
    studio.api.save_run_as_test(doc, run_id).await
}

/// The tests of blueprint `blueprint` (by id), not run.
#[tauri::command]
#[specta::specta]
pub async fn blueprint_tests(studio: State<'_, Studio>, blueprint: String) -> Result<TestListDto> {
    studio.api.blueprint_tests(blueprint).await
}

/// Runs every test of `doc`'s blueprint, with `doc` as the blueprint under test.
#[tauri::command]
#[specta::specta]
pub async fn run_blueprint_tests(studio: State<'_, Studio>, doc: Json) -> Result<Vec<TestDto>> {
    studio.api.run_blueprint_tests(doc).await
}
