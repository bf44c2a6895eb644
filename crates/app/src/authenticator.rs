//! The sign-in every front door builds its pool with: the data folder's token vault behind
//! an [`Authenticator`] whose `AUTH_REQUIRED` advice names the command, or the studio
//! button, that signs in from that front door. Below the use cases ([`crate::auth`] signs
//! in and out, [`crate::headless`] and the [`crate::App`] run with it), so it imports none
//! of them.

use crate::advice::Front;
use mcpflow_auth::{Authenticator, Vault};
use std::path::Path;
use std::sync::Arc;

/// The authenticator of data folder `home`, advising in `front`'s words.
pub fn authenticator(home: &Path, front: Front) -> Arc<Authenticator> {
    authenticator_advising(home, Arc::new(move |server| front.login(server)))
}

/// The authenticator of data folder `home` with its own advice for `AUTH_REQUIRED`.
pub fn authenticator_advising(home: &Path, advice: mcpflow_auth::Advice) -> Arc<Authenticator> {
    Arc::new(Authenticator::new(Vault::in_data_dir(home)).with_advice(advice))
}

/// `run `mcpflow auth login NAME FLAGS`, then run again`: the command that finds the
/// server where the failing command found it (`--servers FILE`, `--store`,
/// `--blueprint FILE`).
pub fn cli_login_advice(server: &str, flags: &str) -> String {
    format!("run `mcpflow auth login {}{flags}`, then run again", shell_word(server))
}

/// ` --servers FILE` for each file, quoted for a POSIX shell where needed.
pub fn servers_flags(files: &[std::path::PathBuf]) -> String {
    files.iter().map(|f| format!(" --servers {}", shell_word(&f.display().to_string()))).collect()
}

pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}
