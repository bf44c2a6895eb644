//! The studio's commands: each decodes its arguments, calls one use case of
//! `mcpflow-app`, and returns its result typed for `ui/src/bindings.ts`. They are all
//! async: Tauri runs those on its tokio runtime, which the app's use cases need (sync
//! commands run on the main thread, outside it).

use crate::dialogs;
use crate::dto::{
    AnswerDto, AskingDto, AuthStatusDto, BlueprintInfo, CommandError, DiagnosticDto, ExportedFiles, ImportedFile, Json,
    OpenedBlueprint, QuestionDto, SamplingProviderDto, SamplingSettingsDto, SaveResult, ServerDto, ServerOffer,
    ServerTestDto, SignedOutDto, StudioInfo, TelemetryConfigDto, TelemetrySettingsDto,
};
use mcpflow_service::api::Api;
use serde_json::Value;
use tauri::{AppHandle, State};

type Result<T> = std::result::Result<T, CommandError>;

/// The studio's client interface (the service holding the data folder, or this process)
/// and what the shell learnt at start.
#[derive(Debug)]
pub struct Studio {
    pub api: Api,
    pub info: StudioInfo,
}

#[tauri::command]
#[specta::specta]
pub async fn studio_info(studio: State<'_, Studio>) -> Result<StudioInfo> {
    Ok(studio.info.clone())
}

#[tauri::command]
#[specta::specta]
pub async fn list_blueprints(studio: State<'_, Studio>) -> Result<Vec<BlueprintInfo>> {
    studio.api.list_blueprints().await
}

#[tauri::command]
#[specta::specta]
pub async fn get_blueprint(studio: State<'_, Studio>, id: String) -> Result<OpenedBlueprint> {
    studio.api.get_blueprint(id).await
}

/// Every diagnostic of a document being edited (errors and warnings).
#[tauri::command]
#[specta::specta]
pub async fn validate_blueprint(studio: State<'_, Studio>, doc: Json) -> Result<Vec<DiagnosticDto>> {
    studio.api.validate_blueprint(doc).await
}

/// Saves a new revision; errors block (the error carries them), warnings come back.
#[tauri::command]
#[specta::specta]
pub async fn save_blueprint(studio: State<'_, Studio>, doc: Json) -> Result<SaveResult> {
    studio.api.save_blueprint(doc).await
}

#[tauri::command]
#[specta::specta]
pub async fn delete_blueprint(studio: State<'_, Studio>, id: String) -> Result<()> {
    studio.api.delete_blueprint(id).await
}

#[tauri::command]
#[specta::specta]
pub async fn list_servers(studio: State<'_, Studio>) -> Result<Vec<ServerDto>> {
    studio.api.list_servers().await
}

/// Adds or replaces a server (an `mcpServers` entry). Starts nothing.
#[tauri::command]
#[specta::specta]
pub async fn put_server(studio: State<'_, Studio>, name: String, config: Json) -> Result<Vec<ServerDto>> {
    studio.api.put_server(name, config).await
}

/// Turns a server's switch "may ask the model" on or off (`"sampling"` on its entry).
#[tauri::command]
#[specta::specta]
pub async fn set_server_sampling(studio: State<'_, Studio>, name: String, on: bool) -> Result<Vec<ServerDto>> {
    studio.api.set_server_sampling(name, on).await
}

/// The sampling provider of the data folder's `settings.json`.
#[tauri::command]
#[specta::specta]
pub async fn sampling_settings(studio: State<'_, Studio>) -> Result<SamplingSettingsDto> {
    studio.api.sampling_settings().await
}

/// Saves the sampling provider (`None` removes it), keeping the rest of `settings.json`;
/// `BAD_REQUEST` names the field that does not pass.
#[tauri::command]
#[specta::specta]
pub async fn set_sampling_provider(
    studio: State<'_, Studio>,
    provider: Option<SamplingProviderDto>,
) -> Result<SamplingSettingsDto> {
    studio.api.set_sampling_provider(provider).await
}

/// The telemetry section of the data folder's `settings.json`, and where spans go now.
#[tauri::command]
#[specta::specta]
pub async fn telemetry_settings(studio: State<'_, Studio>) -> Result<TelemetrySettingsDto> {
    studio.api.telemetry_settings().await
}

/// Saves the telemetry section (`None` removes it), keeping the rest of `settings.json`;
/// the runs that start from now on use it. `BAD_REQUEST` names the field that does not pass.
#[tauri::command]
#[specta::specta]
pub async fn set_telemetry_settings(
    studio: State<'_, Studio>,
    config: Option<TelemetryConfigDto>,
) -> Result<TelemetrySettingsDto> {
    studio.api.set_telemetry_settings(config).await
}

#[tauri::command]
#[specta::specta]
pub async fn delete_server(studio: State<'_, Studio>, name: String) -> Result<Vec<ServerDto>> {
    studio.api.delete_server(name).await
}

/// Approves the exact command line the server starts; returns that command line.
#[tauri::command]
#[specta::specta]
pub async fn approve_server(studio: State<'_, Studio>, name: String) -> Result<String> {
    studio.api.approve_server(name).await
}

/// Connects (starting the server if it is approved): the protocol revision it spoke
/// and its tools.
#[tauri::command]
#[specta::specta]
pub async fn test_server(studio: State<'_, Studio>, name: String) -> Result<ServerTestDto> {
    studio.api.test_server(name).await
}

/// What every configured server offers, for the palette. Approved servers are started;
/// the others are listed with `SERVER_NOT_APPROVED` and stay stopped.
#[tauri::command]
#[specta::specta]
pub async fn server_offers(studio: State<'_, Studio>) -> Result<Vec<ServerOffer>> {
    studio.api.server_offers().await
}

/// Imports every entry of an `mcpServers` JSON file the user picks. Starts nothing and
/// approves nothing. `None` when the user cancelled.
#[tauri::command]
#[specta::specta]
pub async fn import_servers(handle: AppHandle, studio: State<'_, Studio>) -> Result<Option<Vec<String>>> {
    let Some(path) = dialogs::pick_open(&handle, "Import servers (mcpServers JSON)").await else {
        return Ok(None);
    };
    let doc = mcpflow_app::blueprints::read_json_file(&path, "a servers file", "it should list servers only")?;
    Ok(Some(studio.api.import_servers(Json(doc)).await?))
}

/// Reads a blueprint file the user picks, for the editor (not saved until Save).
/// `None` when the user cancelled.
#[tauri::command]
#[specta::specta]
pub async fn import_blueprint(handle: AppHandle, studio: State<'_, Studio>) -> Result<Option<ImportedFile>> {
    let Some(path) = dialogs::pick_open(&handle, "Import a blueprint").await else {
        return Ok(None);
    };
    let doc = Json(mcpflow_app::blueprints::read_blueprint_file(&path)?);
    let diagnostics = studio.api.validate_blueprint(doc.clone()).await?;
    Ok(Some(ImportedFile { path: path.display().to_string(), doc, diagnostics }))
}

/// Writes the document being edited (unsaved edits included) to a file the user picks,
/// portable (`mcpflow_app::portable`): the configured servers it uses copied in with
/// `${env:NAME}` for values, the stored blueprints it calls beside it (`ID.json`), and
/// `NAME.README.md` with the variables and the `mcpflow run` command. A called
/// blueprint's file already there with other content is not overwritten (`FILE_EXISTS`,
/// nothing written). `None` when the user cancelled.
#[tauri::command]
#[specta::specta]
pub async fn export_blueprint(
    handle: AppHandle,
    studio: State<'_, Studio>,
    doc: Json,
) -> Result<Option<ExportedFiles>> {
    let portable = studio.api.portable_document(doc).await?;
    let Some((first, _)) = portable.files.first() else {
        return Err(CommandError::new("BAD_REQUEST", "nothing to export".to_owned()));
    };
    let Some(path) = dialogs::pick_save(&handle, "Export the blueprint", first).await else {
        return Ok(None);
    };
    let folder = path.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "blueprint".into());
    let text = |value: &Value| {
        serde_json::to_string_pretty(value)
            .map(|t| t + "\n")
            .map_err(|e| CommandError::new("BAD_REQUEST", format!("the document is not JSON: {e}")))
    };
    let mut beside = Vec::new();
    for (name, sub) in portable.files.iter().skip(1) {
        beside.push((folder.join(name), text(sub)?));
    }
    // The README goes with the file picked (replaced with it); a called blueprint's file
    // that is there already must be the same.
    let readme = folder.join(format!("{stem}.README.md"));
    let differs = |p: &std::path::PathBuf, content: &String| {
        *p != path && p.exists() && std::fs::read_to_string(p).ok().as_ref() != Some(content)
    };
    if let Some((taken, _)) = beside.iter().find(|(p, content)| differs(p, content)) {
        return Err(CommandError::new(
            "FILE_EXISTS",
            format!("{} exists; export into another folder, or move it away (nothing was written)", taken.display()),
        ));
    }
    let write = |target: &std::path::Path, content: &str| {
        std::fs::write(target, content).map_err(|e| {
            CommandError::new(
                "FILE_ERROR",
                format!("could not write {}: {e}; pick a folder you can write to", target.display()),
            )
        })
    };
    let main_file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    beside.push((readme, portable.readme(&main_file)));
    write(&path, &text(&portable.files[0].1)?)?;
    for (target, content) in &beside {
        write(target, content)?;
    }
    Ok(Some(ExportedFiles {
        path: path.display().to_string(),
        beside: beside.iter().map(|(p, _)| p.display().to_string()).collect(),
        env: portable.env.keys().cloned().collect(),
        left_out: portable.left_out,
    }))
}

/// The login of every configured HTTP server (signed in or not; never a token).
#[tauri::command]
#[specta::specta]
pub async fn auth_status(studio: State<'_, Studio>) -> Result<Vec<AuthStatusDto>> {
    studio.api.auth_status().await
}

/// Signs in to `server` through the system browser and waits (up to five minutes) for
/// the redirect; returns the new login. With `doc` (the document a run failed for), the
/// server is found as that run found it: the document's own `servers` count too. A
/// sign-in already waiting for the same server is stopped first. `AUTH_CANCELLED` when
/// `auth_cancel` stopped this one.
#[tauri::command]
#[specta::specta]
pub async fn auth_login(studio: State<'_, Studio>, server: String, doc: Option<Json>) -> Result<AuthStatusDto> {
    studio.api.auth_login(server, doc).await
}

/// Stops waiting for the browser sign-in to `server` (its loopback listener closes, so a
/// late redirect finds nobody). True when one was waiting.
#[tauri::command]
#[specta::specta]
pub async fn auth_cancel(studio: State<'_, Studio>, server: String) -> Result<bool> {
    studio.api.auth_cancel(server).await
}

/// Forgets the login `server` holds (its tokens leave the vault), then asks the
/// authorization server to revoke them (a few seconds at most); says whether it did.
#[tauri::command]
#[specta::specta]
pub async fn auth_logout(studio: State<'_, Studio>, server: String) -> Result<SignedOutDto> {
    studio.api.auth_logout(server).await
}

/// The questions a run waits on (for a run opened after they were asked); all runs'
/// when `run_id` is `None`.
#[tauri::command]
#[specta::specta]
pub async fn questions(studio: State<'_, Studio>, run_id: Option<String>) -> Result<Vec<QuestionDto>> {
    studio.api.questions(run_id).await
}

/// Answers a run's open question; the run goes on. `QUESTION_NOT_OPEN` when it was
/// answered already or its step ended; `BAD_REQUEST` (field by field) when the content
/// does not fit the form.
#[tauri::command]
#[specta::specta]
pub async fn answer_question(
    studio: State<'_, Studio>,
    run_id: String,
    question_id: String,
    answer: AnswerDto,
) -> Result<()> {
    studio.api.answer_question(run_id, question_id, answer).await
}

/// Opens the page of a run's open URL-mode question in the system browser. The URL is
/// the server's, taken from the question (the window never sends one); only `http(s)`
/// without credentials is opened.
#[tauri::command]
#[specta::specta]
pub async fn open_question_url(studio: State<'_, Studio>, run_id: String, question_id: String) -> Result<()> {
    let open = studio.api.questions(Some(run_id.clone())).await?;
    let Some(question) = open.iter().find(|q| q.id == question_id) else {
        return Err(CommandError::new(
            "QUESTION_NOT_OPEN",
            format!("run `{run_id}` has no open question `{question_id}` (answered already, or its step ended)"),
        ));
    };
    match (question.asking, question.url.as_deref()) {
        (AskingDto::ElicitationUrl, Some(url)) => crate::browse::open(url),
        _ => Err(CommandError::new(
            "BAD_REQUEST",
            format!("question `{question_id}` of step `{}` asks for no page to visit", question.step),
        )),
    }
}
