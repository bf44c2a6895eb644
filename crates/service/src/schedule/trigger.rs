//! [`Trigger`]: a blueprint's `schedule` parsed once, and the first instant it fires
//! after a given one.

use super::ScheduleError;
use chrono::{DateTime, LocalResult, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use mcpflow_blueprint::model::Schedule;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

const NANOS_PER_SEC: i128 = 1_000_000_000;

/// When a blueprint fires: the parsed form of its `schedule`.
///
/// # Cron and daylight saving time
///
/// A cron expression is matched against the wall clock of its time zone (UTC unless
/// `timezone` names another). On the days that clock jumps, what fires depends on
/// whether the expression names wall times or a rhythm (Vixie cron's rule):
///
/// - **Wall times**: no `*` in the minute and hour fields (`30 2 * * *`,
///   `0 9,21 * * 1-5`, `@daily`). Every wall time the expression names fires once:
///   - *spring forward*, a wall time that does not exist that day (02:30 on 2026-03-08
///     in America/New_York, where 02:00 EST jumps to 03:00 EDT): it fires **at the
///     first instant after the gap**, 03:00 EDT = 07:00Z, as soon as the clock has
///     passed it. Several wall times in one gap fire once, together.
///   - *fall back*, a wall time that happens twice (01:30 on 2026-11-01 in
///     America/New_York): it fires **at the first occurrence only**, 01:30 EDT =
///     05:30Z, not again at 01:30 EST.
/// - **A rhythm**: a `*` in the minute or hour field (`0 * * * *`, `*/15 * * * *`). It
///   follows real time, as [croner] evaluates it: wall times in the gap do not exist
///   and are passed over, wall times in the repeated hour fire on both occurrences; an
///   hourly job fires once per real hour across both changes.
///
/// Either way one instant never fires twice: [`Trigger::next_after`] is strictly after
/// its argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// A five-field cron expression (or an `@daily`-style nickname) read in `tz`.
    /// Boxed: a parsed expression is some 300 bytes, the other kinds 16.
    Cron { cron: Box<croner::Cron>, tz: Tz },
    /// Every `period`, counted from the schedule's anchor (when it was first seen):
    /// anchor + 1·period, anchor + 2·period, … however long the runs take.
    Every { period: Duration },
    /// Once, at `instant`.
    At { instant: DateTime<Utc> },
}

impl Trigger {
    /// Parses a blueprint's `schedule` with the same rules as the validator, so a
    /// blueprint that validates always yields a trigger.
    pub fn from_schedule(s: &Schedule) -> Result<Trigger, ScheduleError> {
        let given = [s.cron.is_some(), s.every.is_some(), s.at.is_some()].into_iter().filter(|b| *b).count();
        if given > 1 {
            return Err(ScheduleError::Form { given });
        }
        if let Some(cron) = &s.cron {
            Trigger::cron(cron, s.timezone.as_deref())
        } else if let Some(tz) = &s.timezone {
            Err(ScheduleError::field("timezone", tz, "`timezone` applies only to `cron`; remove it or add `cron`"))
        } else if let Some(every) = &s.every {
            Trigger::every(every)
        } else if let Some(at) = &s.at {
            Trigger::at(at)
        } else {
            Err(ScheduleError::Form { given })
        }
    }

    /// A cron trigger: five fields (minute hour day month weekday) or a nickname such
    /// as `@daily`, in the IANA time zone `timezone` (UTC when `None`).
    pub fn cron(expr: &str, timezone: Option<&str>) -> Result<Trigger, ScheduleError> {
        let fields = expr.split_whitespace().count();
        if !expr.trim_start().starts_with('@') && fields != 5 {
            return Err(ScheduleError::field(
                "cron",
                expr,
                format!(
                    "has {fields} fields; cron here has 5 (minute hour day month weekday), \
                     for example \"0 9 * * 1-5\" is 09:00 on weekdays"
                ),
            ));
        }
        // croner splits on whitespace too; one space between fields makes two spellings
        // of the same expression equal triggers.
        let normalized = expr.split_whitespace().collect::<Vec<_>>().join(" ");
        let cron = croner::Cron::from_str(&normalized).map_err(|e| {
            ScheduleError::field(
                "cron",
                expr,
                format!("not a valid cron expression: {e} (fields: minute hour day month weekday)"),
            )
        })?;
        let tz = match timezone {
            None => Tz::UTC,
            Some(name) => Tz::from_str(name).map_err(|_| {
                ScheduleError::field(
                    "timezone",
                    name,
                    "unknown time zone; use an IANA name such as \"UTC\", \"Europe/Berlin\" or \"America/New_York\"",
                )
            })?,
        };
        Ok(Trigger::Cron { cron: Box::new(cron), tz })
    }

    /// An interval trigger from text such as `15m`, `1h 30m`, `1d`; at least one second.
    pub fn every(text: &str) -> Result<Trigger, ScheduleError> {
        let hint = "write it like \"30s\", \"5m\", \"1h 30m\", \"1d\"";
        let period = humantime::parse_duration(text)
            .map_err(|e| ScheduleError::field("every", text, format!("not an interval: {e}; {hint}")))?;
        if period.as_secs() < 1 {
            return Err(ScheduleError::field("every", text, "the shortest interval is 1s"));
        }
        Ok(Trigger::Every { period })
    }

    /// A one-time trigger from an RFC 3339 instant (`2026-12-01T09:00:00Z`, or with an
    /// offset).
    pub fn at(text: &str) -> Result<Trigger, ScheduleError> {
        let instant = DateTime::parse_from_rfc3339(text).map_err(|e| {
            ScheduleError::field(
                "at",
                text,
                format!(
                    "not an RFC 3339 time ({e}); write it like \"2026-12-01T09:00:00Z\" \
                     or with an offset, \"2026-12-01T09:00:00+01:00\""
                ),
            )
        })?;
        Ok(Trigger::At { instant: instant.with_timezone(&Utc) })
    }

    /// The first fire strictly after `after`, or `None` when there is none (an `at`
    /// already passed, a cron expression that matches no date such as `0 0 30 2 *`).
    ///
    /// `anchor` is where an [`Every`](Trigger::Every) trigger counts from (it fires at
    /// `anchor + k·period`, k ≥ 1); the other kinds ignore it. Cron follows the DST
    /// rules in the type's documentation.
    pub fn next_after(&self, after: DateTime<Utc>, anchor: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Trigger::Cron { cron, tz } if names_wall_times(cron) => next_wall_time(cron, *tz, after),
            Trigger::Cron { cron, tz } => {
                let next = cron.find_next_occurrence(&after.with_timezone(tz), false).ok()?;
                Some(next.with_timezone(&Utc))
            }
            Trigger::Every { period } => every_after(anchor, *period, after),
            Trigger::At { instant } => (*instant > after).then_some(*instant),
        }
    }
}

/// The canonical text of a trigger, e.g. `cron "0 9 * * 1-5" in Europe/Berlin`,
/// `every 1h 30m`, `at 2026-12-01T08:00:00Z`. Two spellings of one schedule print the
/// same (`mon-fri` and `1-5`, `@daily` and `0 0 * * *`, `90m` and `1h30m`, an offset
/// and `Z`). [`ScheduleState`](super::ScheduleState) keeps it to tell whether a
/// restored state belongs to the current schedule.
impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trigger::Cron { cron, tz } => write!(f, "cron {:?} in {}", cron.as_str(), tz.name()),
            Trigger::Every { period } => write!(f, "every {}", humantime::format_duration(*period)),
            Trigger::At { instant } => write!(f, "at {}", instant.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)),
        }
    }
}

/// Whether a cron expression names wall times rather than a rhythm: no `*` (or `?`,
/// which croner reads as `*`) in its minute and hour fields. `as_str` is croner's
/// normalized five fields, nicknames expanded.
fn names_wall_times(cron: &croner::Cron) -> bool {
    cron.as_str().split_whitespace().take(2).all(|field| !field.contains(['*', '?']))
}

/// The first wall time of `cron` in `tz` that happens after `after`: a wall time in a
/// gap happens when the gap ends; a repeated one, at its first occurrence.
///
/// Read that way, later wall times never happen earlier, so the first candidate past
/// `after` is the answer. Candidates before it can only be wall times of a repeated
/// range whose first occurrence has passed: an hour or two of them at most.
fn next_wall_time(cron: &croner::Cron, tz: Tz, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
    const MAX_CANDIDATES: usize = 10_000;
    let mut wall = after.with_timezone(&tz).naive_local();
    for _ in 0..MAX_CANDIDATES {
        wall = cron.find_next_occurrence(&wall, false).ok()?;
        let instant = match tz.from_local_datetime(&wall) {
            LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => t.with_timezone(&Utc),
            LocalResult::None => gap_end(tz, wall)?,
        };
        if instant > after {
            return Some(instant);
        }
    }
    None
}

/// The instant the clock jumps past `wall`, a wall time inside a gap: the first
/// instant whose wall time is later. The jump lies within a day of `wall` read as UTC
/// (offsets are under 15 hours), and the wall time rises with the instant there, so
/// a binary search over seconds finds it.
fn gap_end(tz: Tz, wall: NaiveDateTime) -> Option<DateTime<Utc>> {
    let centre = wall.and_utc().timestamp();
    let (mut before, mut after) = (centre - 86_400, centre + 86_400);
    let later = |secs: i64| DateTime::from_timestamp(secs, 0).map(|t| t.with_timezone(&tz).naive_local() > wall);
    while after - before > 1 {
        let mid = before + (after - before) / 2;
        if later(mid)? {
            after = mid;
        } else {
            before = mid;
        }
    }
    DateTime::from_timestamp(after, 0)
}

/// `anchor + k·period` for the smallest k ≥ 1 that is strictly after `after`; exact
/// integer nanoseconds, so slots never drift.
fn every_after(anchor: DateTime<Utc>, period: Duration, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let period = i128::try_from(period.as_nanos()).ok().filter(|p| *p > 0)?;
    let elapsed = nanos(after) - nanos(anchor);
    let k = if elapsed < 0 { 1 } else { elapsed / period + 1 };
    from_nanos(nanos(anchor).checked_add(k.checked_mul(period)?)?)
}

fn nanos(t: DateTime<Utc>) -> i128 {
    i128::from(t.timestamp()) * NANOS_PER_SEC + i128::from(t.timestamp_subsec_nanos())
}

fn from_nanos(n: i128) -> Option<DateTime<Utc>> {
    let secs = i64::try_from(n.div_euclid(NANOS_PER_SEC)).ok()?;
    let sub = u32::try_from(n.rem_euclid(NANOS_PER_SEC)).ok()?;
    DateTime::from_timestamp(secs, sub)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn every_counts_whole_periods_from_the_anchor() {
        let anchor = t("2026-01-01T10:00:00Z");
        let p = Duration::from_secs(900);
        assert_eq!(every_after(anchor, p, t("2025-12-31T00:00:00Z")), Some(t("2026-01-01T10:15:00Z")));
        assert_eq!(every_after(anchor, p, anchor), Some(t("2026-01-01T10:15:00Z")));
        assert_eq!(every_after(anchor, p, t("2026-01-01T10:15:00Z")), Some(t("2026-01-01T10:30:00Z")));
        assert_eq!(every_after(anchor, p, t("2026-01-01T10:29:59.999999999Z")), Some(t("2026-01-01T10:30:00Z")));
        assert_eq!(every_after(anchor, p, t("2026-03-01T07:07:07Z")), Some(t("2026-03-01T07:15:00Z")));
    }

    #[test]
    fn every_keeps_sub_second_anchors_exact() {
        let anchor = t("2026-01-01T10:00:00.25Z");
        let p = Duration::from_millis(1500);
        assert_eq!(every_after(anchor, p, t("2026-01-01T10:00:03Z")), Some(t("2026-01-01T10:00:03.25Z")));
    }

    #[test]
    fn every_past_the_end_of_time_is_none() {
        let p = Duration::from_secs(u64::MAX);
        assert_eq!(every_after(t("2026-01-01T00:00:00Z"), p, t("2026-01-01T00:00:00Z")), None);
    }
}
