//! The values the server reports for `SHOW name` and `current_setting('name')`: PostgreSQL's
//! (as a read-only, UTF-8, repeatable-read server of version [`SERVER_VERSION`]) and the
//! server's own limits.

use crate::serve::Shared;

/// The server version clients are told (the protocol and catalog level it behaves like).
pub(super) const SERVER_VERSION: &str = "16.0";

/// Named configuration values for `SHOW` and `current_setting()`.
pub(super) fn setting(shared: &Shared, name: &str) -> Option<String> {
    let c = &shared.config;
    Some(match name.to_ascii_lowercase().as_str() {
        "server_version" => SERVER_VERSION.into(),
        "server_version_num" => "160000".into(),
        "server_encoding" | "client_encoding" => "UTF8".into(),
        "transaction_isolation" | "default_transaction_isolation" | "transaction isolation level" => {
            "repeatable read".into()
        }
        "transaction_read_only" | "default_transaction_read_only" => "on".into(),
        "standard_conforming_strings" | "integer_datetimes" => "on".into(),
        "is_superuser" => "off".into(),
        "datestyle" => "ISO, MDY".into(),
        "timezone" | "time zone" => "UTC".into(),
        "intervalstyle" => "postgres".into(),
        "search_path" => "public".into(),
        "application_name" => String::new(),
        "max_identifier_length" => "63".into(),
        "extra_float_digits" => "3".into(),
        "lc_messages" | "lc_collate" | "lc_ctype" => "C".into(),
        "statement_timeout" => format!("{}ms", c.statement_timeout.as_millis()),
        "max_connections" => c.max_connections.to_string(),
        "ripples_retain_epochs" => c.retain_epochs.to_string(),
        "ripples_max_rows" => c.max_rows.to_string(),
        _ => return None,
    })
}
