//! Move-time planning for the Gomocup time controls.
//!
//! The manager announces `timeout_turn` (per move), `timeout_match` (per game, 0 = unlimited),
//! `time_left` (before every move; may be negative, 2147483647 = unlimited) and, with
//! Yixin-Board, `time_increment`. [`TimeControl::plan`] turns them into a [`MovePlan`]: a
//! *soft* budget that the searcher is told (it stops by itself when that runs out) and a
//! *hard* deadline at which the engine sets the search's stop flag from a timer. Both are
//! counted from the moment the command line was read, so parsing and set-up are paid for.
//!
//! Margins: the hard deadline keeps `max(50 ms, 5 %)` of the allowed time plus a fixed reply
//! overhead in reserve, because managers measure from their side of the pipe and a brain may be
//! descheduled; the soft budget is the hard one less `max(5 ms, 2.5 %)` and, with a match
//! clock, at most `time_left / moves_to_go + increment`.

use std::time::Duration;

/// `time_left` value that managers send when the match time is unlimited.
pub const UNLIMITED_TIME_LEFT: i64 = 2_147_483_647;
/// Reference skeleton default for `timeout_turn` when the manager sends nothing.
pub const DEFAULT_TURN_MS: i64 = 30_000;
/// Time kept for writing the reply and for scheduling noise, in ms: on a loaded machine the
/// reply can reach the manager tens of ms after the stop flag is set (measurements in
/// docs/notebook/2026-11-26-strength.md).
pub const REPLY_OVERHEAD_MS: i64 = 40;
/// Smallest safety margin, in ms.
pub const MIN_MARGIN_MS: i64 = 50;
/// Smallest gap between the soft budget and the hard deadline, in ms.
pub const SOFT_GAP_MS: i64 = 5;
/// Larger times (about 35 years) are treated as this.
const MAX_MS: i64 = 1 << 40;

/// The time limits announced by the manager (all in milliseconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// `INFO timeout_turn`: time per move; `0` = answer at once.
    pub turn_ms: i64,
    /// `INFO timeout_match`: time for the whole game; `Some(0)` = unlimited; `None` = never
    /// sent (then a finite `time_left` alone limits the game, as the protocol allows).
    pub match_ms: Option<i64>,
    /// `INFO time_left`: remaining game time; `None` until the manager sends it.
    pub time_left_ms: Option<i64>,
    /// `INFO time_increment`: Fischer increment per move.
    pub increment_ms: i64,
}

impl Default for TimeControl {
    fn default() -> Self {
        TimeControl {
            turn_ms: DEFAULT_TURN_MS,
            match_ms: None,
            time_left_ms: None,
            increment_ms: 0,
        }
    }
}

/// What the engine does for one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MovePlan {
    /// No time to search: answer with a static (greedy) move at once.
    Instant,
    /// Search with a soft budget; the engine stops the search at the hard deadline.
    Search {
        /// Budget given to the searcher (its `Limits::time`).
        soft: Duration,
        /// Time after which the engine sets the stop flag itself.
        hard: Duration,
    },
}

impl TimeControl {
    /// The game time left when it limits this move: a finite `time_left`, unless
    /// `timeout_match 0` declared the game time unlimited.
    fn left_limited(&self) -> Option<i64> {
        if self.match_ms == Some(0) {
            return None;
        }
        match self.time_left_ms {
            Some(t) if t < UNLIMITED_TIME_LEFT => Some(t),
            // Without time_left, the whole match time is the best we know.
            None => self.match_ms.filter(|&m| m > 0),
            _ => None,
        }
    }

    /// Plans one move. `empty_points` is the number of empty points on the board, used to
    /// estimate how many moves remain for splitting the match time.
    pub fn plan(&self, empty_points: usize) -> MovePlan {
        if self.turn_ms == 0 {
            return MovePlan::Instant;
        }
        // The manager's absolute limit for this move. Values are clamped so that no
        // arithmetic below can overflow, whatever the manager sent.
        let turn = if self.turn_ms > 0 {
            self.turn_ms.min(MAX_MS)
        } else {
            DEFAULT_TURN_MS
        };
        let left = self.left_limited().map(|l| l.clamp(-MAX_MS, MAX_MS));
        let limit = match left {
            Some(l) => turn.min(l),
            None => turn,
        };
        let margin = MIN_MARGIN_MS.max(limit / 20) + REPLY_OVERHEAD_MS;
        let hard = limit - margin;
        if hard <= 0 {
            return MovePlan::Instant;
        }
        // The searchers check their budget at every node and stop within a few ms of it, so
        // the soft budget can sit just below the hard deadline; the hard one stays the
        // safety net for a search that cannot stop in time.
        let mut soft = hard - (hard / 40).max(SOFT_GAP_MS);
        if let Some(l) = left {
            // Split what is left over the moves we still expect to play.
            let moves_to_go = (empty_points as i64 / 4).clamp(10, 30);
            let share = l.max(0) / moves_to_go + self.increment_ms.clamp(0, MAX_MS);
            soft = soft.min(share);
        }
        let soft = soft.max(1);
        MovePlan::Search {
            soft: Duration::from_millis(soft as u64),
            hard: Duration::from_millis(hard as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(p: MovePlan) -> (u64, u64) {
        match p {
            MovePlan::Instant => (0, 0),
            MovePlan::Search { soft, hard } => (soft.as_millis() as u64, hard.as_millis() as u64),
        }
    }

    #[test]
    fn turn_only() {
        let tc = TimeControl {
            turn_ms: 1000,
            ..TimeControl::default()
        };
        let (soft, hard) = ms(tc.plan(225));
        // 5 % margin (50 ms) + 20 ms overhead.
        assert_eq!(hard as i64, 1000 - 50 - REPLY_OVERHEAD_MS);
        assert!(soft <= hard && soft >= 800, "soft {soft}");
    }

    #[test]
    fn zero_turn_is_instant() {
        let tc = TimeControl {
            turn_ms: 0,
            ..TimeControl::default()
        };
        assert_eq!(tc.plan(225), MovePlan::Instant);
    }

    #[test]
    fn match_time_is_split() {
        let tc = TimeControl {
            turn_ms: 30_000,
            match_ms: Some(180_000),
            time_left_ms: Some(60_000),
            increment_ms: 0,
        };
        let (soft, hard) = ms(tc.plan(200));
        assert_eq!(hard as i64, 30_000 - 1_500 - REPLY_OVERHEAD_MS);
        assert_eq!(soft, 60_000 / 30);
        // Late in the game fewer moves remain: a larger share.
        let (soft_late, _) = ms(tc.plan(20));
        assert_eq!(soft_late, 60_000 / 10);
    }

    #[test]
    fn negative_or_tiny_time_left_is_instant() {
        let mut tc = TimeControl {
            turn_ms: 5000,
            match_ms: Some(100_000),
            time_left_ms: Some(-300),
            increment_ms: 0,
        };
        assert_eq!(tc.plan(100), MovePlan::Instant);
        tc.time_left_ms = Some(60);
        assert_eq!(tc.plan(100), MovePlan::Instant);
        tc.time_left_ms = Some(400);
        let (soft, hard) = ms(tc.plan(100));
        assert_eq!(hard as i64, 400 - 50 - REPLY_OVERHEAD_MS);
        assert!(soft >= 1 && soft <= hard);
    }

    #[test]
    fn unlimited_time_left_uses_turn() {
        let tc = TimeControl {
            turn_ms: 2000,
            match_ms: Some(0),
            time_left_ms: Some(UNLIMITED_TIME_LEFT),
            increment_ms: 0,
        };
        let (_, hard) = ms(tc.plan(100));
        assert_eq!(hard as i64, 2000 - 100 - REPLY_OVERHEAD_MS);
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        for turn in [i64::MIN, -1, 1, i64::MAX] {
            for left in [None, Some(i64::MIN), Some(-1), Some(i64::MAX)] {
                for m in [None, Some(0), Some(i64::MAX)] {
                    let tc = TimeControl {
                        turn_ms: turn,
                        match_ms: m,
                        time_left_ms: left,
                        increment_ms: i64::MAX,
                    };
                    if let MovePlan::Search { soft, hard } = tc.plan(usize::MAX) {
                        assert!(soft <= hard);
                    }
                }
            }
        }
    }

    #[test]
    fn time_left_ignored_when_match_unlimited() {
        let mut tc = TimeControl {
            turn_ms: 1000,
            match_ms: Some(0),
            time_left_ms: Some(0),
            increment_ms: 0,
        };
        assert!(matches!(tc.plan(100), MovePlan::Search { .. }));
        // Never told about the match time: a finite time_left alone limits the move.
        tc.match_ms = None;
        assert_eq!(tc.plan(100), MovePlan::Instant);
    }

    #[test]
    fn increment_adds_to_share() {
        let base = TimeControl {
            turn_ms: 100_000,
            match_ms: Some(100_000),
            time_left_ms: Some(30_000),
            increment_ms: 0,
        };
        let with_inc = TimeControl {
            increment_ms: 1000,
            ..base.clone()
        };
        let (a, _) = ms(base.plan(200));
        let (b, _) = ms(with_inc.plan(200));
        assert_eq!(b, a + 1000);
    }
}
