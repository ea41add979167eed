//! Token files: the bearer tokens of `--auth-token-file` (the live listener, `--serve`) and
//! `--http-auth-token-file` (the monitor), read one way for every listener.

use crate::driver::RunError;

/// A token file (`--auth-token-file`, `--http-auth-token-file`): its content, surrounding
/// whitespace trimmed, one word.
pub(super) fn read_token(path: &std::path::Path) -> Result<String, RunError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| RunError::Other(format!("cannot read {}: {}", path.display(), e)))?;
    let token = text.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(RunError::Input(format!("{}: the token must be one word, not empty", path.display())));
    }
    Ok(token.to_string())
}
