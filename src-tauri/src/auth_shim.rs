//! TEMPORARY: o1's contract until branch o1 is merged. Not committed.
#![allow(dead_code)]
use mcpflow_app::App;
use mcpflow_app::AppError;
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct AuthStatus {
    pub server: String,
    pub url: String,
    pub signed_in: bool,
    pub grant: Option<String>,
    pub account: Option<String>,
    pub scopes: Vec<String>,
    pub expires_at_ms: Option<i64>,
    pub refreshable: bool,
}
#[derive(Debug, Default)]
pub struct LoginOptions {
    pub timeout: std::time::Duration,
    pub x: u8,
}
pub trait AuthShim {
    async fn auth_status(&self) -> Result<Vec<AuthStatus>, AppError>;
    async fn auth_login(&self, server: &str, options: LoginOptions) -> Result<AuthStatus, AppError>;
    async fn auth_logout(&self, server: &str) -> Result<(), AppError>;
}
impl AuthShim for App {
    async fn auth_status(&self) -> Result<Vec<AuthStatus>, AppError> {
        Ok(vec![])
    }
    async fn auth_login(&self, _server: &str, _o: LoginOptions) -> Result<AuthStatus, AppError> {
        Err(AppError::BadRequest("not yet".into()))
    }
    async fn auth_logout(&self, _server: &str) -> Result<(), AppError> {
        Ok(())
    }
}
