//! Where spans go, resolved once per process (or per run in the studio): `--otlp URL`,
//! then the `telemetry` section of the data folder's `settings.json`, then the standard
//! `OTEL_*` environment. With none of them nothing is built and nothing is sent (the
//! SDK's own `localhost:4318` default is never used).

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Protocol {
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    #[serde(rename = "grpc")]
    Grpc,
}

impl Protocol {
    fn parse(value: &str, from: &'static str) -> Result<Protocol> {
        match value.trim() {
            "http/protobuf" => Ok(Protocol::HttpProtobuf),
            "grpc" => Ok(Protocol::Grpc),
            other => Err(Error::ProtocolUnknown { value: other.to_owned(), from }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::Grpc => "grpc",
        }
    }
}

/// The `telemetry` section of `settings.json` (written by the studio).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The collector's base URL (`http://localhost:4318`); `/v1/traces` is appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// Header name → `${env:NAME}` (a literal value is refused: secrets stay out of the file).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub capture_payloads: bool,
}

impl Settings {
    /// Whether the section can be written as it is: its endpoint (when given) an
    /// `http://` or `https://` URL with a host, each header a valid HTTP header name whose
    /// value is `${env:NAME}`. The variables are not read here: the process that exports
    /// reads them when telemetry starts.
    pub fn check(&self) -> Result<()> {
        if let Some(endpoint) = self.endpoint.as_deref().filter(|e| !e.trim().is_empty()) {
            check_endpoint(endpoint.trim(), SETTINGS)?;
        }
        for (name, value) in &self.headers {
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(Error::HeaderNameInvalid { name: name.clone() });
            }
            if env_reference(value).is_none() {
                return Err(Error::HeaderLiteral { name: name.clone() });
            }
        }
        Ok(())
    }
}

/// `NAME` of a value written `${env:NAME}`.
pub fn env_reference(value: &str) -> Option<&str> {
    value.trim().strip_prefix("${env:").and_then(|v| v.strip_suffix('}')).filter(|v| !v.is_empty())
}

/// What the command line says (`--otlp URL`, `--otlp-capture-payloads`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    pub otlp: Option<String>,
    pub capture_payloads: bool,
}

/// A resolved configuration: telemetry is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Where spans are sent, used as is (`…/v1/traces` over HTTP); `None`: spans are
    /// made (their ids still propagate) but not sent (`OTEL_TRACES_EXPORTER=none`).
    pub traces_endpoint: Option<String>,
    /// Where metrics are sent (`…/v1/metrics`); `None`: no metrics
    /// (`OTEL_METRICS_EXPORTER=none`).
    pub metrics_endpoint: Option<String>,
    /// How often metrics are sent (`OTEL_METRIC_EXPORT_INTERVAL`, 60 s); they are also
    /// sent at shutdown.
    pub metric_interval: Duration,
    pub protocol: Protocol,
    /// Extra headers (from the settings, resolved); `OTEL_EXPORTER_OTLP_HEADERS` is read by
    /// the exporter itself.
    pub headers: Vec<(String, String)>,
    pub capture_payloads: bool,
    pub service_name: String,
    /// Per export request (`OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s).
    pub timeout: Duration,
    /// Spans waiting to be sent at most (`OTEL_BSP_MAX_QUEUE_SIZE`, 2048); past it new
    /// spans are dropped and counted.
    pub max_queue: usize,
    /// How long spans wait to be sent in a batch (`OTEL_BSP_SCHEDULE_DELAY`, 5 s).
    pub scheduled_delay: Duration,
    /// Retry a failed export (3 times, backing off). Off for a short-lived `mcpflow run`,
    /// whose exit should not wait through the backoff.
    pub retries: bool,
}

/// Where a setting came from, for error messages.
const FLAG: &str = "--otlp";
const SETTINGS: &str = "the `telemetry` section of settings.json";

impl Config {
    /// Resolves the configuration; `Ok(None)`: telemetry is off (nothing configured, or
    /// `OTEL_SDK_DISABLED=true`, or both `OTEL_TRACES_EXPORTER` and
    /// `OTEL_METRICS_EXPORTER` are `none`). Per signal: the flag, then the settings, then
    /// `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT` (as is), then
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`. One protocol serves both signals. `env` reads a variable
    /// (`|k| std::env::var(k).ok()` in the binaries; a map in tests).
    pub fn resolve(
        flags: &Flags,
        settings: Option<&Settings>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Config>> {
        let env = |key: &str| env(key).filter(|v| !v.trim().is_empty());
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let off = |var: &str| env(var).is_some_and(|v| v.trim().eq_ignore_ascii_case("none"));
        let protocol = match (settings.and_then(|s| s.protocol), env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")) {
            (Some(p), _) => p,
            (None, Some(v)) => Protocol::parse(&v, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")?,
            (None, None) => match env("OTEL_EXPORTER_OTLP_PROTOCOL") {
                Some(v) => Protocol::parse(&v, "OTEL_EXPORTER_OTLP_PROTOCOL")?,
                None => Protocol::HttpProtobuf,
            },
        };
        // A base URL gets the signal's path over HTTP; gRPC takes the base as it is.
        let signal = |base: &str, path: &str| match protocol {
            Protocol::HttpProtobuf => format!("{}/v1/{path}", base.trim().trim_end_matches('/')),
            Protocol::Grpc => base.trim().to_owned(),
        };
        let settings_endpoint = settings.and_then(|s| s.endpoint.as_deref()).filter(|e| !e.trim().is_empty());
        let base = match flags.otlp.as_deref().filter(|u| !u.trim().is_empty()) {
            Some(url) => Some((url, FLAG)),
            None => settings_endpoint.map(|url| (url, SETTINGS)),
        };
        let endpoint = |exporter_var: &str, signal_var: &'static str, path: &str| -> Result<Option<String>> {
            if off(exporter_var) {
                return Ok(None);
            }
            let (url, from) = if let Some((url, from)) = base {
                (signal(url, path), from)
            } else if let Some(url) = env(signal_var) {
                (url.trim().to_owned(), signal_var)
            } else if let Some(url) = env("OTEL_EXPORTER_OTLP_ENDPOINT") {
                (signal(&url, path), "OTEL_EXPORTER_OTLP_ENDPOINT")
            } else {
                return Ok(None);
            };
            check_endpoint(&url, from)?;
            Ok(Some(url))
        };
        let traces_endpoint = endpoint("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "traces")?;
        let metrics_endpoint = endpoint("OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "metrics")?;
        if traces_endpoint.is_none() && metrics_endpoint.is_none() {
            return Ok(None);
        }
        let mut headers = Vec::new();
        for (name, value) in settings.map(|s| &s.headers).into_iter().flatten() {
            headers.push((name.clone(), header_value(name, value, &env)?));
        }
        let timeout = match env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") {
            Some(v) => millis(&v, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")?,
            None => match env("OTEL_EXPORTER_OTLP_TIMEOUT") {
                Some(v) => millis(&v, "OTEL_EXPORTER_OTLP_TIMEOUT")?,
                None => Duration::from_secs(10),
            },
        };
        let max_queue = match env("OTEL_BSP_MAX_QUEUE_SIZE") {
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(Error::EnvInvalid {
                        var: "OTEL_BSP_MAX_QUEUE_SIZE",
                        value: v,
                        expected: "a positive whole number of spans",
                    });
                }
            },
            None => 2048,
        };
        let scheduled_delay = match env("OTEL_BSP_SCHEDULE_DELAY") {
            Some(v) => millis(&v, "OTEL_BSP_SCHEDULE_DELAY")?,
            None => Duration::from_secs(5),
        };
        let metric_interval = match env("OTEL_METRIC_EXPORT_INTERVAL") {
            Some(v) => millis(&v, "OTEL_METRIC_EXPORT_INTERVAL")?,
            None => Duration::from_secs(60),
        };
        Ok(Some(Config {
            traces_endpoint,
            metrics_endpoint,
            metric_interval,
            protocol,
            headers,
            capture_payloads: flags.capture_payloads || settings.is_some_and(|s| s.capture_payloads),
            service_name: env("OTEL_SERVICE_NAME").map_or_else(|| "mcpflow".to_owned(), |v| v.trim().to_owned()),
            timeout,
            max_queue,
            scheduled_delay,
            retries: true,
        }))
    }
}

/// An `http://` or `https://` URL with a host.
fn check_endpoint(url: &str, from: &'static str) -> Result<()> {
    let invalid = || Error::EndpointInvalid { value: url.to_owned(), from };
    let uri: http::Uri = url.parse().map_err(|_| invalid())?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
    if !scheme_ok || uri.host().is_none_or(str::is_empty) {
        return Err(invalid());
    }
    Ok(())
}

/// A header value from the settings: only `${env:NAME}`, read now.
fn header_value(name: &str, value: &str, env: &impl Fn(&str) -> Option<String>) -> Result<String> {
    let Some(var) = env_reference(value) else {
        return Err(Error::HeaderLiteral { name: name.to_owned() });
    };
    env(var).ok_or_else(|| Error::HeaderEnvMissing { name: name.to_owned(), var: var.to_owned() })
}

fn millis(value: &str, var: &'static str) -> Result<Duration> {
    value.trim().parse::<u64>().map(Duration::from_millis).map_err(|_| Error::EnvInvalid {
        var,
        value: value.to_owned(),
        expected: "a whole number of milliseconds",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |k| map.get(k).cloned()
    }

    fn flag(url: &str) -> Flags {
        Flags { otlp: Some(url.to_owned()), capture_payloads: false }
    }

    #[test]
    fn nothing_configured_is_off() {
        assert_eq!(Config::resolve(&Flags::default(), None, env(&[])).unwrap(), None);
        // Settings without an endpoint, and a service name alone, turn nothing on.
        let settings = Settings { capture_payloads: true, ..Settings::default() };
        assert_eq!(
            Config::resolve(&Flags::default(), Some(&settings), env(&[("OTEL_SERVICE_NAME", "x")])).unwrap(),
            None
        );
    }

    #[test]
    fn the_flag_wins_over_settings_which_win_over_the_environment() {
        let settings = Settings { endpoint: Some("http://settings:4318/".into()), ..Settings::default() };
        let e = env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318")]);
        let c = Config::resolve(&flag("http://flag:4318"), Some(&settings), &e).unwrap().unwrap();
        assert_eq!(c.traces_endpoint.as_deref(), Some("http://flag:4318/v1/traces"));
        assert_eq!(c.metrics_endpoint.as_deref(), Some("http://flag:4318/v1/metrics"));
        let c = Config::resolve(&Flags::default(), Some(&settings), &e).unwrap().unwrap();
        assert_eq!(c.traces_endpoint.as_deref(), Some("http://settings:4318/v1/traces"));
        let c = Config::resolve(&Flags::default(), None, &e).unwrap().unwrap();
        assert_eq!(c.traces_endpoint.as_deref(), Some("http://env:4318/v1/traces"));
        assert_eq!(c.service_name, "mcpflow");
        assert_eq!(
            (c.max_queue, c.scheduled_delay, c.timeout),
            (2048, Duration::from_secs(5), Duration::from_secs(10))
        );
    }

    #[test]
    fn the_signal_endpoint_is_used_as_it_is() {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:9999/custom"),
        ]);
        let c = Config::resolve(&Flags::default(), None, e).unwrap().unwrap();
        assert_eq!(c.traces_endpoint.as_deref(), Some("http://traces:9999/custom"));
        assert_eq!(c.metrics_endpoint.as_deref(), Some("http://env:4318/v1/metrics"));
    }

    #[test]
    fn sdk_disabled_or_both_exporters_none_turn_even_the_flag_off() {
        for pair in [("OTEL_SDK_DISABLED", "true"), ("OTEL_SDK_DISABLED", "TRUE")] {
            assert_eq!(Config::resolve(&flag("http://flag:4318"), None, env(&[pair])).unwrap(), None, "{pair:?}");
        }
        let both = env(&[("OTEL_TRACES_EXPORTER", "none"), ("OTEL_METRICS_EXPORTER", "none")]);
        assert_eq!(Config::resolve(&flag("http://flag:4318"), None, both).unwrap(), None);
        let c =
            Config::resolve(&flag("http://f:4318"), None, env(&[("OTEL_TRACES_EXPORTER", "none")])).unwrap().unwrap();
        assert_eq!((c.traces_endpoint, c.metrics_endpoint.as_deref()), (None, Some("http://f:4318/v1/metrics")));
        let c =
            Config::resolve(&flag("http://f:4318"), None, env(&[("OTEL_METRICS_EXPORTER", "none")])).unwrap().unwrap();
        assert_eq!((c.traces_endpoint.as_deref(), c.metrics_endpoint), (Some("http://f:4318/v1/traces"), None));
        let c = Config::resolve(&flag("http://flag:4318"), None, env(&[("OTEL_SDK_DISABLED", "false")])).unwrap();
        assert!(c.is_some());
    }

    #[test]
    fn the_standard_variables_set_the_queue_delay_timeout_protocol_and_service() {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "8"),
            ("OTEL_BSP_SCHEDULE_DELAY", "50"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1500"),
            ("OTEL_SERVICE_NAME", "agent-flows"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "250"),
        ]);
        let c = Config::resolve(&Flags::default(), None, e).unwrap().unwrap();
        assert_eq!(c.protocol, Protocol::Grpc);
        assert_eq!(c.traces_endpoint.as_deref(), Some("http://env:4317"));
        assert_eq!(c.metrics_endpoint.as_deref(), Some("http://env:4317"));
        assert_eq!(c.max_queue, 8);
        assert_eq!(c.scheduled_delay, Duration::from_millis(50));
        assert_eq!(c.timeout, Duration::from_millis(1500));
        assert_eq!(c.service_name, "agent-flows");
        assert_eq!(c.metric_interval, Duration::from_millis(250));
    }

    #[test]
    fn bad_values_name_where_they_came_from_and_what_is_expected() {
        let err = Config::resolve(&flag("localhost:4318"), None, env(&[])).unwrap_err();
        assert_eq!(err.code(), "OTLP_ENDPOINT_INVALID");
        assert!(err.to_string().contains("--otlp"), "{err}");
        let err = Config::resolve(&flag("ftp://x"), None, env(&[])).unwrap_err();
        assert_eq!(err.code(), "OTLP_ENDPOINT_INVALID");
        let err =
            Config::resolve(&flag("http://x"), None, env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")])).unwrap_err();
        assert_eq!(err.code(), "OTLP_PROTOCOL_UNKNOWN");
        assert!(err.to_string().contains("OTEL_EXPORTER_OTLP_PROTOCOL"), "{err}");
        let err = Config::resolve(&flag("http://x"), None, env(&[("OTEL_BSP_MAX_QUEUE_SIZE", "-1")])).unwrap_err();
        assert_eq!(err.code(), "OTEL_ENV_INVALID");
        assert!(err.to_string().contains("OTEL_BSP_MAX_QUEUE_SIZE"), "{err}");
    }

    #[test]
    fn settings_headers_come_only_from_the_environment() {
        let mut settings = Settings { endpoint: Some("https://api.honeycomb.io".into()), ..Settings::default() };
        settings.headers.insert("x-honeycomb-team".into(), "${env:HONEYCOMB_KEY}".into());
        let c = Config::resolve(&Flags::default(), Some(&settings), env(&[("HONEYCOMB_KEY", "k")])).unwrap().unwrap();
        assert_eq!(c.headers, vec![("x-honeycomb-team".to_owned(), "k".to_owned())]);
        let err = Config::resolve(&Flags::default(), Some(&settings), env(&[])).unwrap_err();
        assert_eq!(err.code(), "OTLP_HEADER_ENV_MISSING");
        assert!(err.to_string().contains("HONEYCOMB_KEY"), "{err}");
        settings.headers.insert("x-honeycomb-team".into(), "the-key-itself".into());
        let err = Config::resolve(&Flags::default(), Some(&settings), env(&[])).unwrap_err();
        assert_eq!(err.code(), "OTLP_HEADER_LITERAL");
        assert!(!err.to_string().contains("the-key-itself"), "{err}");
    }

    #[test]
    fn settings_are_checked_before_they_are_written() {
        assert!(Settings::default().check().is_ok());
        let mut s = Settings { endpoint: Some("http://localhost:4318".into()), ..Settings::default() };
        s.headers.insert("x-honeycomb-team".into(), "${env:HONEYCOMB_KEY}".into());
        // The variable need not be set here: the exporting process reads it.
        assert!(s.check().is_ok());
        s.headers.insert("x-honeycomb-team".into(), "the-key".into());
        let err = s.check().unwrap_err();
        assert_eq!(err.code(), "OTLP_HEADER_LITERAL");
        assert!(!err.to_string().contains("the-key"), "{err}");
        s.headers.clear();
        s.headers.insert("bad header".into(), "${env:X}".into());
        assert_eq!(s.check().unwrap_err().code(), "OTLP_HEADER_NAME_INVALID");
        s.headers.clear();
        s.endpoint = Some("localhost:4318".into());
        let err = s.check().unwrap_err();
        assert_eq!(err.code(), "OTLP_ENDPOINT_INVALID");
        assert!(err.to_string().contains("settings.json"), "{err}");
    }

    #[test]
    fn settings_read_from_json_refuse_unknown_fields() {
        let s: Settings = serde_json::from_str(r#"{"endpoint":"http://x:4318","protocol":"grpc"}"#).unwrap();
        assert_eq!(s.protocol, Some(Protocol::Grpc));
        assert!(serde_json::from_str::<Settings>(r#"{"endpiont":"http://x"}"#).is_err());
    }
}
