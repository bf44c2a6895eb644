//! The schedule planner with an injected clock: every instant is a value, every
//! assertion an exact instant.

use chrono::{DateTime, Utc};
use mcpflow_blueprint::model::Schedule;
use mcpflow_service::schedule::{Fire, FireReason, Planner, ScheduleError, ScheduleState, Trigger};
use serde_json::{Value, json};

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn cron(expr: &str, tz: Option<&str>) -> Trigger {
    Trigger::cron(expr, tz).unwrap()
}

fn every(text: &str) -> Trigger {
    Trigger::every(text).unwrap()
}

/// The fires of `trigger` from `start` on (exclusive), while they are before `end`.
fn fires_between(trigger: &Trigger, start: &str, end: &str) -> Vec<DateTime<Utc>> {
    let (start, end) = (t(start), t(end));
    let mut out = Vec::new();
    let mut after = start;
    while let Some(next) = trigger.next_after(after, start).filter(|n| *n < end) {
        out.push(next);
        after = next;
    }
    out
}

fn due(blueprint: &str, at: &str, reason: FireReason) -> Fire {
    Fire { blueprint: blueprint.to_owned(), scheduled_for: t(at), reason }
}

/// Calls `due` every minute over [from, to) and collects every fire.
fn drive(planner: &mut Planner, from: &str, to: &str) -> Vec<Fire> {
    let (mut now, end) = (t(from), t(to));
    let mut fires = Vec::new();
    while now < end {
        fires.extend(planner.due(now));
        now += chrono::TimeDelta::minutes(1);
    }
    fires
}

#[test]
fn cron_in_utc_fires_strictly_after_the_given_instant() {
    let daily = cron("0 9 * * *", None);
    let anchor = t("2026-01-01T00:00:00Z");
    assert_eq!(daily.next_after(t("2026-01-10T08:00:00Z"), anchor), Some(t("2026-01-10T09:00:00Z")));
    assert_eq!(daily.next_after(t("2026-01-10T08:59:59.5Z"), anchor), Some(t("2026-01-10T09:00:00Z")));
    assert_eq!(daily.next_after(t("2026-01-10T09:00:00Z"), anchor), Some(t("2026-01-11T09:00:00Z")));
    let weekdays = cron("30 7 * * 1-5", Some("UTC"));
    // 2026-01-09 is a Friday: the next weekday is Monday the 12th.
    assert_eq!(weekdays.next_after(t("2026-01-09T08:00:00Z"), anchor), Some(t("2026-01-12T07:30:00Z")));
}

#[test]
fn cron_in_berlin_fires_at_0800z_in_winter_and_0700z_in_summer() {
    let daily = cron("0 9 * * *", Some("Europe/Berlin"));
    let anchor = t("2026-01-01T00:00:00Z");
    assert_eq!(daily.next_after(t("2026-01-15T00:00:00Z"), anchor), Some(t("2026-01-15T08:00:00Z")));
    assert_eq!(daily.next_after(t("2026-07-15T00:00:00Z"), anchor), Some(t("2026-07-15T07:00:00Z")));
    // Berlin springs forward on 2026-03-29 (02:00 CET → 03:00 CEST).
    assert_eq!(
        fires_between(&daily, "2026-03-27T12:00:00Z", "2026-03-31T00:00:00Z"),
        [t("2026-03-28T08:00:00Z"), t("2026-03-29T07:00:00Z"), t("2026-03-30T07:00:00Z")]
    );
}

#[test]
fn cron_in_the_spring_forward_gap_fires_once_at_the_end_of_the_gap() {
    // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist that day.
    let job = cron("30 2 * * *", Some("America/New_York"));
    assert_eq!(
        fires_between(&job, "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z"),
        [
            t("2026-03-07T07:30:00Z"), // 02:30 EST
            t("2026-03-08T07:00:00Z"), // 03:00 EDT, the first instant after the gap
            t("2026-03-09T06:30:00Z"), // 02:30 EDT
        ]
    );
    // Asked from inside the day, before the gap: the same instant.
    assert_eq!(job.next_after(t("2026-03-08T06:59:59Z"), t("2026-03-01T00:00:00Z")), Some(t("2026-03-08T07:00:00Z")));
}

#[test]
fn cron_in_the_fall_back_overlap_fires_once_at_the_first_occurrence() {
    // New York, 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
    let job = cron("30 1 * * *", Some("America/New_York"));
    assert_eq!(
        fires_between(&job, "2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z"),
        [
            t("2026-10-31T05:30:00Z"), // 01:30 EDT
            t("2026-11-01T05:30:00Z"), // 01:30 EDT, the first of the two
            t("2026-11-02T06:30:00Z"), // 01:30 EST
        ]
    );
    // Asked between the two occurrences, the second one is not a fire.
    assert_eq!(job.next_after(t("2026-11-01T06:00:00Z"), t("2026-10-01T00:00:00Z")), Some(t("2026-11-02T06:30:00Z")));
}

#[test]
fn cron_wall_time_lists_fire_each_wall_time_once_across_dst() {
    let ny = Some("America/New_York");
    // Both 02:00 and 02:30 fall into the gap: they fire once, together, when it ends.
    assert_eq!(
        fires_between(&cron("0,30 2 * * *", ny), "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z"),
        [
            t("2026-03-07T07:00:00Z"),
            t("2026-03-07T07:30:00Z"),
            t("2026-03-08T07:00:00Z"),
            t("2026-03-09T06:00:00Z"),
            t("2026-03-09T06:30:00Z"),
        ]
    );
    // 01:30 and 13:30: the repeated 01:30 EST (06:30Z) is not a fire.
    assert_eq!(
        fires_between(&cron("30 1,13 * * *", ny), "2026-10-31T12:00:00Z", "2026-11-02T00:00:00Z"),
        [t("2026-10-31T17:30:00Z"), t("2026-11-01T05:30:00Z"), t("2026-11-01T18:30:00Z")]
    );
    // Lord Howe Island moves by half an hour: 02:00 +10:30 jumps to 02:30 +11:00.
    assert_eq!(
        fires_between(&cron("15 2 * * *", Some("Australia/Lord_Howe")), "2026-10-02T00:00:00Z", "2026-10-05T00:00:00Z"),
        [t("2026-10-02T15:45:00Z"), t("2026-10-03T15:30:00Z"), t("2026-10-04T15:15:00Z")]
    );
}

#[test]
fn planner_fires_dst_days_exactly_once_each() {
    let mut planner = Planner::new();
    planner.upsert("spring", cron("30 2 * * *", Some("America/New_York")), t("2026-03-08T00:00:00Z"));
    assert_eq!(
        drive(&mut planner, "2026-03-08T00:00:00Z", "2026-03-08T23:00:00Z"),
        [due("spring", "2026-03-08T07:00:00Z", FireReason::Due)]
    );

    let mut planner = Planner::new();
    planner.upsert("fall", cron("30 1 * * *", Some("America/New_York")), t("2026-11-01T00:00:00Z"));
    assert_eq!(
        drive(&mut planner, "2026-11-01T00:00:00Z", "2026-11-01T23:00:00Z"),
        [due("fall", "2026-11-01T05:30:00Z", FireReason::Due)]
    );
    assert_eq!(planner.next_wake(t("2026-11-01T23:00:00Z")), Some(t("2026-11-02T06:30:00Z")));
}

#[test]
fn cron_hourly_follows_real_hours_across_both_changes() {
    let hourly = cron("0 * * * *", Some("America/New_York"));
    // Spring: 01:00 EST, then 03:00 EDT one real hour later (02:00 does not exist).
    assert_eq!(
        fires_between(&hourly, "2026-03-08T05:30:00Z", "2026-03-08T08:30:00Z"),
        [t("2026-03-08T06:00:00Z"), t("2026-03-08T07:00:00Z"), t("2026-03-08T08:00:00Z")]
    );
    // Fall: 01:00 EDT, 01:00 EST, 02:00 EST: still one per real hour.
    assert_eq!(
        fires_between(&hourly, "2026-11-01T04:30:00Z", "2026-11-01T07:30:00Z"),
        [t("2026-11-01T05:00:00Z"), t("2026-11-01T06:00:00Z"), t("2026-11-01T07:00:00Z")]
    );
}

#[test]
fn every_is_anchored_and_does_not_drift_with_run_durations() {
    let mut planner = Planner::new();
    planner.upsert("sync", every("15m"), t("2026-05-01T10:00:00Z"));
    assert_eq!(planner.next_wake(t("2026-05-01T10:00:00Z")), Some(t("2026-05-01T10:15:00Z")));
    assert_eq!(planner.due(t("2026-05-01T10:14:59Z")), []);

    // The driver wakes a little late, the run takes 7 minutes.
    assert_eq!(planner.due(t("2026-05-01T10:15:02Z")), [due("sync", "2026-05-01T10:15:00Z", FireReason::Due)]);
    planner.run_started("sync");
    planner.run_finished("sync");
    assert_eq!(planner.next_wake(t("2026-05-01T10:22:02Z")), Some(t("2026-05-01T10:30:00Z")));
    assert_eq!(planner.due(t("2026-05-01T10:30:00Z")), [due("sync", "2026-05-01T10:30:00Z", FireReason::Due)]);

    // A day later, every slot fired once and the grid is still on the anchor.
    let fires = drive(&mut planner, "2026-05-01T10:31:00Z", "2026-05-02T11:01:00Z");
    assert_eq!(fires.len(), 98);
    assert_eq!(fires.first().unwrap().scheduled_for, t("2026-05-01T10:45:00Z"));
    assert_eq!(fires.last().unwrap().scheduled_for, t("2026-05-02T11:00:00Z"));
    assert!(fires.windows(2).all(|w| w[1].scheduled_for - w[0].scheduled_for == chrono::TimeDelta::minutes(15)));
    let state = planner.state("sync").unwrap();
    assert_eq!(state.anchor, t("2026-05-01T10:00:00Z"));
    assert_eq!(state.next_fire, Some(t("2026-05-02T11:15:00Z")));
}

#[test]
fn at_fires_exactly_once_also_across_a_restore() {
    let at = Trigger::at("2026-06-01T09:00:00+02:00").unwrap();
    let mut planner = Planner::new();
    planner.upsert("once", at.clone(), t("2026-05-01T00:00:00Z"));
    assert_eq!(planner.next_wake(t("2026-05-01T00:00:00Z")), Some(t("2026-06-01T07:00:00Z")));
    assert_eq!(planner.due(t("2026-06-01T06:59:59Z")), []);
    assert_eq!(planner.due(t("2026-06-01T07:00:00Z")), [due("once", "2026-06-01T07:00:00Z", FireReason::Due)]);
    assert_eq!(planner.due(t("2026-06-01T07:00:00Z")), []);
    assert_eq!(planner.next_wake(t("2026-06-01T07:00:01Z")), None);

    let saved = planner.state("once").unwrap();
    assert_eq!(saved.next_fire, None);
    assert_eq!(saved.last_fire, Some(t("2026-06-01T07:00:00Z")));

    let mut restarted = Planner::new();
    restarted.restore("once", saved);
    restarted.upsert("once", at, t("2026-06-02T00:00:00Z"));
    assert_eq!(restarted.due(t("2026-06-02T00:00:00Z")), []);
    assert_eq!(restarted.next_wake(t("2026-06-02T00:00:00Z")), None);
}

#[test]
fn at_that_passed_while_closed_fires_once_as_missed() {
    let at = Trigger::at("2026-06-01T07:00:00Z").unwrap();
    let mut planner = Planner::new();
    planner.upsert("once", at.clone(), t("2026-05-01T00:00:00Z"));
    let saved = planner.state("once").unwrap();

    let mut restarted = Planner::new();
    restarted.restore("once", saved);
    restarted.upsert("once", at, t("2026-06-03T00:00:00Z"));
    assert_eq!(restarted.due(t("2026-06-03T00:00:00Z")), [due("once", "2026-06-01T07:00:00Z", FireReason::Missed)]);
    assert_eq!(restarted.due(t("2026-06-03T00:01:00Z")), []);
    assert_eq!(restarted.state("once").unwrap().next_fire, None);
}

#[test]
fn at_already_past_when_first_seen_never_fires() {
    let mut planner = Planner::new();
    planner.upsert("late", Trigger::at("2026-06-01T07:00:00Z").unwrap(), t("2026-06-01T07:00:01Z"));
    assert_eq!(planner.due(t("2026-06-02T00:00:00Z")), []);
    assert_eq!(planner.next_wake(t("2026-06-02T00:00:00Z")), None);
}

#[test]
fn missed_slots_while_closed_fire_once_on_start_then_continue_from_now() {
    let mut planner = Planner::new();
    planner.upsert("sync", every("15m"), t("2026-05-01T09:45:00Z"));
    assert_eq!(planner.due(t("2026-05-01T10:00:00Z")).len(), 1);
    let saved = planner.state("sync").unwrap();
    // The app closes at 10:05 and starts again at 13:02: 12 slots (10:15 … 13:00) passed.
    let mut restarted = Planner::new();
    restarted.restore("sync", serde_json::from_value(serde_json::to_value(&saved).unwrap()).unwrap());
    restarted.upsert("sync", every("15m"), t("2026-05-01T13:02:00Z"));
    assert_eq!(restarted.next_wake(t("2026-05-01T13:02:00Z")), Some(t("2026-05-01T13:02:00Z")));
    assert_eq!(restarted.due(t("2026-05-01T13:02:00Z")), [due("sync", "2026-05-01T10:15:00Z", FireReason::Missed)]);
    assert_eq!(restarted.due(t("2026-05-01T13:02:30Z")), []);
    // Then on the anchored grid again, and the next fire is an ordinary one.
    assert_eq!(restarted.next_wake(t("2026-05-01T13:02:30Z")), Some(t("2026-05-01T13:15:00Z")));
    assert_eq!(restarted.due(t("2026-05-01T13:15:00Z")), [due("sync", "2026-05-01T13:15:00Z", FireReason::Due)]);
}

#[test]
fn missed_cron_slots_while_closed_fire_once_then_the_next_daily_slot() {
    let job = cron("0 9 * * *", Some("Europe/Berlin"));
    let mut planner = Planner::new();
    planner.upsert("daily", job.clone(), t("2026-01-01T12:00:00Z"));
    let saved = planner.state("daily").unwrap();
    assert_eq!(saved.next_fire, Some(t("2026-01-02T08:00:00Z")));

    // Closed for three days, back on 2026-01-05 at 12:00Z.
    let mut restarted = Planner::new();
    restarted.upsert("daily", job, t("2026-01-05T12:00:00Z"));
    restarted.restore("daily", saved);
    assert_eq!(restarted.due(t("2026-01-05T12:00:00Z")), [due("daily", "2026-01-02T08:00:00Z", FireReason::Missed)]);
    assert_eq!(restarted.next_wake(t("2026-01-05T12:00:00Z")), Some(t("2026-01-06T08:00:00Z")));
}

#[test]
fn nothing_missed_on_start_means_no_missed_fire() {
    let mut planner = Planner::new();
    planner.upsert("sync", every("1h"), t("2026-05-01T10:00:00Z"));
    let saved = planner.state("sync").unwrap();
    let mut restarted = Planner::new();
    restarted.restore("sync", saved);
    restarted.upsert("sync", every("60m"), t("2026-05-01T10:20:00Z"));
    assert_eq!(restarted.due(t("2026-05-01T10:20:00Z")), []);
    assert_eq!(restarted.due(t("2026-05-01T11:00:00Z")), [due("sync", "2026-05-01T11:00:00Z", FireReason::Due)]);
}

#[test]
fn a_fire_due_while_the_previous_run_is_running_is_skipped_and_counted() {
    let mut planner = Planner::new();
    planner.upsert("slow", every("10m"), t("2026-05-01T10:00:00Z"));
    assert_eq!(planner.due(t("2026-05-01T10:10:00Z")), [due("slow", "2026-05-01T10:10:00Z", FireReason::Due)]);
    planner.run_started("slow");

    // Still running at 10:20 and 10:30: both slots are skipped, not queued.
    assert_eq!(planner.due(t("2026-05-01T10:20:00Z")), []);
    assert_eq!(planner.due(t("2026-05-01T10:30:00Z")), []);
    let state = planner.state("slow").unwrap();
    assert_eq!(state.skipped_overlaps, 2);
    assert_eq!(state.last_fire, Some(t("2026-05-01T10:10:00Z")));
    assert_eq!(state.next_fire, Some(t("2026-05-01T10:40:00Z")));

    planner.run_finished("slow");
    assert_eq!(planner.due(t("2026-05-01T10:35:00Z")), []);
    assert_eq!(planner.due(t("2026-05-01T10:40:00Z")), [due("slow", "2026-05-01T10:40:00Z", FireReason::Due)]);
    assert_eq!(planner.state("slow").unwrap().skipped_overlaps, 2);
}

#[test]
fn overlapping_runs_are_counted_until_the_last_one_finishes() {
    let mut planner = Planner::new();
    planner.upsert("bp", every("1m"), t("2026-05-01T10:00:00Z"));
    planner.run_started("bp"); // a manual run
    planner.run_started("bp"); // and another
    planner.run_finished("bp");
    assert_eq!(planner.due(t("2026-05-01T10:01:00Z")), []);
    planner.run_finished("bp");
    assert_eq!(planner.due(t("2026-05-01T10:02:00Z")), [due("bp", "2026-05-01T10:02:00Z", FireReason::Due)]);
    assert_eq!(planner.state("bp").unwrap().skipped_overlaps, 1);
}

#[test]
fn next_wake_is_the_earliest_across_blueprints() {
    let now = t("2026-05-01T10:07:00Z");
    let mut planner = Planner::new();
    assert_eq!(planner.next_wake(now), None);
    planner.upsert("hourly", cron("0 * * * *", None), now);
    planner.upsert("quarter", every("15m"), t("2026-05-01T10:00:00Z"));
    planner.upsert("once", Trigger::at("2026-05-01T10:09:30Z").unwrap(), now);
    planner.upsert("gone", Trigger::at("2026-05-01T10:08:00Z").unwrap(), now);
    assert_eq!(planner.next_wake(now), Some(t("2026-05-01T10:08:00Z")));
    planner.remove("gone");
    assert_eq!(planner.next_wake(now), Some(t("2026-05-01T10:09:30Z")));
    assert_eq!(planner.due(t("2026-05-01T10:09:30Z")), [due("once", "2026-05-01T10:09:30Z", FireReason::Due)]);
    assert_eq!(planner.next_wake(t("2026-05-01T10:09:30Z")), Some(t("2026-05-01T10:15:00Z")));
    // A fire already due wakes at once, never in the past.
    assert_eq!(planner.next_wake(t("2026-05-01T10:20:00Z")), Some(t("2026-05-01T10:20:00Z")));
}

#[test]
fn fires_due_together_come_out_in_slot_order() {
    let mut planner = Planner::new();
    planner.upsert("b", Trigger::at("2026-05-01T10:01:00Z").unwrap(), t("2026-05-01T10:00:00Z"));
    planner.upsert("c", Trigger::at("2026-05-01T10:02:00Z").unwrap(), t("2026-05-01T10:00:00Z"));
    planner.upsert("a", Trigger::at("2026-05-01T10:02:00Z").unwrap(), t("2026-05-01T10:00:00Z"));
    assert_eq!(
        planner.due(t("2026-05-01T10:05:00Z")),
        [
            due("b", "2026-05-01T10:01:00Z", FireReason::Due),
            due("a", "2026-05-01T10:02:00Z", FireReason::Due),
            due("c", "2026-05-01T10:02:00Z", FireReason::Due),
        ]
    );
}

#[test]
fn a_changed_schedule_resets_its_next_fire_and_an_unchanged_one_keeps_it() {
    let mut planner = Planner::new();
    planner.upsert("bp", every("1h"), t("2026-05-01T10:00:00Z"));
    // Saved again with the same schedule, spelled differently: nothing moves.
    planner.upsert("bp", every("60m"), t("2026-05-01T10:40:00Z"));
    assert_eq!(planner.state("bp").unwrap().next_fire, Some(t("2026-05-01T11:00:00Z")));
    assert_eq!(planner.state("bp").unwrap().anchor, t("2026-05-01T10:00:00Z"));

    planner.upsert("bp", every("30m"), t("2026-05-01T10:40:00Z"));
    let state = planner.state("bp").unwrap();
    assert_eq!(state.trigger, "every 30m");
    assert_eq!(state.anchor, t("2026-05-01T10:40:00Z"));
    assert_eq!(state.next_fire, Some(t("2026-05-01T11:10:00Z")));
    assert_eq!(planner.due(t("2026-05-01T11:00:00Z")), []);
}

#[test]
fn a_restored_state_of_an_older_schedule_is_not_resumed() {
    let mut planner = Planner::new();
    planner.upsert("bp", every("1h"), t("2026-05-01T10:00:00Z"));
    planner.due(t("2026-05-01T11:00:00Z"));
    let saved = planner.state("bp").unwrap();

    // While closed, the blueprint's schedule became daily at 06:00.
    let mut restarted = Planner::new();
    restarted.restore("bp", saved);
    restarted.upsert("bp", cron("0 6 * * *", None), t("2026-05-02T12:00:00Z"));
    assert_eq!(restarted.due(t("2026-05-02T12:00:00Z")), []);
    let state = restarted.state("bp").unwrap();
    assert_eq!(state.next_fire, Some(t("2026-05-03T06:00:00Z")));
    assert_eq!(state.last_fire, Some(t("2026-05-01T11:00:00Z")));
}

#[test]
fn take_changed_reports_states_to_save_and_to_delete() {
    let mut planner = Planner::new();
    planner.upsert("a", every("1m"), t("2026-05-01T10:00:00Z"));
    planner.upsert("b", every("1h"), t("2026-05-01T10:00:00Z"));
    assert_eq!(
        planner.take_changed().iter().map(|(id, s)| (id.as_str(), s.is_some())).collect::<Vec<_>>(),
        [("a", true), ("b", true)]
    );
    assert_eq!(planner.take_changed(), []);
    planner.due(t("2026-05-01T10:01:00Z"));
    planner.remove("b");
    let changed = planner.take_changed();
    assert_eq!(changed, [("a".to_owned(), planner.state("a")), ("b".to_owned(), None)]);
}

#[test]
fn state_round_trips_through_serde_json() {
    let mut planner = Planner::new();
    planner.upsert("bp", cron("*/5 * * * *", Some("Europe/Berlin")), t("2026-05-01T10:00:00Z"));
    planner.due(t("2026-05-01T10:05:00Z"));
    planner.run_started("bp");
    planner.due(t("2026-05-01T10:10:00Z"));
    let state = planner.state("bp").unwrap();
    let value = serde_json::to_value(&state).unwrap();
    assert_eq!(
        value,
        json!({
            "trigger": "cron \"*/5 * * * *\" in Europe/Berlin",
            "anchor": "2026-05-01T10:00:00Z",
            "next_fire": "2026-05-01T10:15:00Z",
            "last_fire": "2026-05-01T10:05:00Z",
            "skipped_overlaps": 1,
        })
    );
    let back: ScheduleState = serde_json::from_str(&value.to_string()).unwrap();
    assert_eq!(back, state);
    let fire = serde_json::to_value(due("bp", "2026-05-01T10:05:00Z", FireReason::Missed)).unwrap();
    assert_eq!(fire, json!({ "blueprint": "bp", "scheduled_for": "2026-05-01T10:05:00Z", "reason": "missed" }));
}

fn schedule(v: Value) -> Schedule {
    serde_json::from_value(v).unwrap()
}

fn error(v: Value) -> String {
    Trigger::from_schedule(&schedule(v)).unwrap_err().to_string()
}

#[test]
fn errors_name_the_field_and_the_value() {
    let e = error(json!({ "cron": "61 * * * *" }));
    assert!(e.starts_with("schedule.cron \"61 * * * *\": not a valid cron expression: "), "{e}");
    let e = error(json!({ "cron": "0 9 * *" }));
    assert!(e.starts_with("schedule.cron \"0 9 * *\": has 4 fields; cron here has 5"), "{e}");
    let e = error(json!({ "cron": "0 9 * * *", "timezone": "Mars/Olympus" }));
    assert!(e.starts_with("schedule.timezone \"Mars/Olympus\": unknown time zone"), "{e}");
    let e = error(json!({ "every": "soon" }));
    assert!(e.starts_with("schedule.every \"soon\": not an interval: "), "{e}");
    assert_eq!(error(json!({ "every": "500ms" })), "schedule.every \"500ms\": the shortest interval is 1s");
    let e = error(json!({ "at": "tomorrow" }));
    assert!(e.starts_with("schedule.at \"tomorrow\": not an RFC 3339 time"), "{e}");
    assert_eq!(error(json!({})), "schedule needs exactly one of `cron`, `every`, `at` (0 given)");
    assert_eq!(
        error(json!({ "every": "5m", "at": "2026-01-01T00:00:00Z" })),
        "schedule needs exactly one of `cron`, `every`, `at` (2 given)"
    );
    let e = Trigger::from_schedule(&schedule(json!({ "every": "5m", "timezone": "UTC" }))).unwrap_err();
    assert_eq!(e.pointer(), "/schedule/timezone");
    assert_eq!(e.code(), "INVALID_SCHEDULE");
    assert!(matches!(e, ScheduleError::Field { field: "timezone", .. }));
}

#[test]
fn a_schedule_yields_a_trigger_exactly_when_the_blueprint_validates() {
    let cases = [
        json!({ "cron": "0 9 * * *" }),
        json!({ "cron": "  0   9 * * MON-FRI " }),
        json!({ "cron": "@daily", "timezone": "Asia/Tokyo" }),
        json!({ "cron": "@reboot" }),
        json!({ "cron": "0 0 9 * * *" }),
        json!({ "cron": "61 * * * *" }),
        json!({ "cron": "0 9 * * *", "timezone": "Europe/Berlin" }),
        json!({ "cron": "0 9 * * *", "timezone": "Europe/Nowhere" }),
        json!({ "every": "1h 30m" }),
        json!({ "every": "1s" }),
        json!({ "every": "999ms" }),
        json!({ "every": "forever" }),
        json!({ "every": "5m", "timezone": "UTC" }),
        json!({ "at": "2026-12-01T09:00:00+01:00" }),
        json!({ "at": "2026-12-01 09:00" }),
        json!({ "at": "2026-12-01T09:00:00Z", "cron": "0 9 * * *" }),
        json!({}),
    ];
    for case in cases {
        let doc = json!({
            "blueprint": 1,
            "id": "scheduled",
            "schedule": case,
            "steps": [{ "id": "a", "kind": "transform", "value": 1 }],
        });
        let report = mcpflow_blueprint::check_value(doc, &mcpflow_blueprint::Options::default());
        let schedule_errors: Vec<_> =
            report.errors().filter(|d| d.code == mcpflow_blueprint::Code::InvalidSchedule).collect();
        let other_errors: Vec<_> =
            report.errors().filter(|d| d.code != mcpflow_blueprint::Code::InvalidSchedule).collect();
        assert!(other_errors.is_empty(), "{case}: {other_errors:?}");
        let trigger = Trigger::from_schedule(&schedule(case.clone()));
        assert_eq!(
            schedule_errors.is_empty(),
            trigger.is_ok(),
            "{case}: validator {schedule_errors:?}, trigger {trigger:?}"
        );
    }
}

#[test]
fn trigger_text_is_canonical() {
    assert_eq!(cron(" 0  9 * * * ", None).to_string(), "cron \"0 9 * * *\" in UTC");
    assert_eq!(cron("0 9 * * mon-fri", Some("Europe/Berlin")).to_string(), "cron \"0 9 * * 1-5\" in Europe/Berlin");
    assert_eq!(cron("0 9 * * MON-FRI", None), cron("0 9 * * 1-5", None));
    assert_eq!(cron("@daily", None).to_string(), "cron \"0 0 * * *\" in UTC");
    assert_eq!(every("90m").to_string(), every("1h 30m").to_string());
    assert_eq!(every("90m"), every("1h30m"));
    assert_eq!(
        Trigger::at("2026-12-01T09:00:00+01:00").unwrap().to_string(),
        Trigger::at("2026-12-01T08:00:00Z").unwrap().to_string()
    );
}

#[test]
fn cron_that_matches_no_date_never_fires() {
    let mut planner = Planner::new();
    planner.upsert("never", cron("0 0 30 2 *", None), t("2026-01-01T00:00:00Z"));
    assert_eq!(planner.state("never").unwrap().next_fire, None);
    assert_eq!(planner.next_wake(t("2026-01-01T00:00:00Z")), None);
}
