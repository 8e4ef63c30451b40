//! GTP time settings (`time_settings`, `kgs-time_settings`, `time_left`) turned into the
//! engine's move plan. The planning itself — margins, soft budget, hard deadline — is the
//! Gomocup clock's ([`TimeControl::plan`]); this module only translates GTP's Canadian
//! byo-yomi into its terms, so both front ends keep the same safety margins.

use std::time::Duration;

use crate::engine::clock::{MovePlan, TimeControl};
use crate::game::Color;

/// The time system announced by the controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeSystem {
    /// No settings received, or explicitly no limit: the per-move default applies.
    Unlimited,
    /// Main time only (ms).
    Absolute {
        /// Main time.
        main_ms: i64,
    },
    /// Canadian byo-yomi: main time, then `stones` moves in every `byo_ms` period.
    Canadian {
        /// Main time.
        main_ms: i64,
        /// Period length.
        byo_ms: i64,
        /// Moves per period (>= 1).
        stones: i64,
    },
}

/// Per-colour clocks of a GTP game.
#[derive(Clone, Debug)]
pub struct GtpClock {
    system: TimeSystem,
    /// Remaining time in the current period (ms) and stones (0 = main time), per colour.
    left: [(i64, i64); 2],
    /// Per-move time when there is no limit (`--move-time`).
    default_move_ms: i64,
}

impl GtpClock {
    /// No time limit; each move gets `default_move`.
    pub fn new(default_move: Duration) -> GtpClock {
        GtpClock {
            system: TimeSystem::Unlimited,
            left: [(0, 0); 2],
            default_move_ms: default_move.as_millis().min(i64::MAX as u128) as i64,
        }
    }

    /// The current system.
    pub fn system(&self) -> &TimeSystem {
        &self.system
    }

    /// `time_settings main byo_time byo_stones` (seconds): `byo_time = 0` is absolute time,
    /// `byo_time > 0` with `byo_stones = 0` means no limit.
    pub fn time_settings(&mut self, main_s: u64, byo_s: u64, stones: u64) {
        let ms = |s: u64| (s.min(1 << 40) as i64) * 1000;
        self.set(if byo_s == 0 {
            TimeSystem::Absolute {
                main_ms: ms(main_s),
            }
        } else if stones == 0 {
            TimeSystem::Unlimited
        } else {
            TimeSystem::Canadian {
                main_ms: ms(main_s),
                byo_ms: ms(byo_s),
                stones: stones.min(1 << 20) as i64,
            }
        });
    }

    /// Sets a time system and resets both clocks to its start.
    pub fn set(&mut self, system: TimeSystem) {
        let start = match system {
            TimeSystem::Unlimited => (0, 0),
            TimeSystem::Absolute { main_ms } => (main_ms, 0),
            TimeSystem::Canadian {
                main_ms,
                byo_ms,
                stones,
            } => {
                if main_ms > 0 {
                    (main_ms, 0)
                } else {
                    (byo_ms, stones)
                }
            }
        };
        self.system = system;
        self.left = [start; 2];
    }

    /// `time_left color time stones`.
    pub fn time_left(&mut self, color: Color, time_s: u64, stones: u64) {
        self.left[color.index()] = (
            (time_s.min(1 << 40) as i64) * 1000,
            stones.min(1 << 20) as i64,
        );
    }

    /// Books `used` against `color`'s clock after one of its moves (until the controller
    /// corrects it with `time_left`).
    pub fn spend(&mut self, color: Color, used: Duration) {
        let used = used.as_millis().min(1 << 50) as i64;
        let (t, s) = &mut self.left[color.index()];
        match self.system {
            TimeSystem::Unlimited => {}
            TimeSystem::Absolute { .. } => *t -= used,
            TimeSystem::Canadian { byo_ms, stones, .. } => {
                if *s == 0 {
                    *t -= used;
                    if *t <= 0 {
                        *t = byo_ms + (*t).max(-byo_ms);
                        *s = stones;
                    }
                } else {
                    *t -= used;
                    *s -= 1;
                    if *s <= 0 {
                        *t = byo_ms;
                        *s = stones;
                    }
                }
            }
        }
    }

    /// The plan for `color`'s next move; `empty_points` helps estimate the moves to go.
    pub fn plan(&self, color: Color, empty_points: usize) -> MovePlan {
        let (t, s) = self.left[color.index()];
        let tc = match self.system {
            TimeSystem::Unlimited => TimeControl {
                turn_ms: self.default_move_ms,
                match_ms: Some(0),
                time_left_ms: None,
                increment_ms: 0,
            },
            TimeSystem::Absolute { .. } => TimeControl {
                turn_ms: t.max(0),
                match_ms: None,
                time_left_ms: Some(t),
                increment_ms: 0,
            },
            TimeSystem::Canadian { byo_ms, stones, .. } => {
                if s > 0 {
                    // In byo-yomi: `t` must last for `s` more moves.
                    TimeControl {
                        turn_ms: (t / s).max(0),
                        match_ms: Some(0),
                        time_left_ms: None,
                        increment_ms: 0,
                    }
                } else {
                    // In main time: what is left of it, plus one byo-yomi move's share.
                    let per = byo_ms / stones.max(1);
                    let total = t.saturating_add(per);
                    TimeControl {
                        turn_ms: total.max(0),
                        match_ms: None,
                        time_left_ms: Some(total),
                        increment_ms: per,
                    }
                }
            }
        };
        tc.plan(empty_points)
    }
}

#[cfg(test)]
// Tests may unwrap: a panic there is a failed test, not a crashed engine.
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn hard_ms(p: MovePlan) -> u64 {
        match p {
            MovePlan::Instant => 0,
            MovePlan::Search { hard, .. } => hard.as_millis() as u64,
        }
    }

    #[test]
    fn default_per_move() {
        let c = GtpClock::new(Duration::from_secs(2));
        let h = hard_ms(c.plan(Color::Black, 81));
        assert!(h > 1500 && h < 2000, "{h}");
    }

    #[test]
    fn byo_yomi_never_exceeds_time_left() {
        let mut c = GtpClock::new(Duration::from_secs(10));
        c.time_settings(0, 5, 1);
        let h = hard_ms(c.plan(Color::White, 81));
        assert!(h > 3000 && h < 5000, "{h}");
        c.time_left(Color::White, 3, 1);
        assert!(hard_ms(c.plan(Color::White, 81)) < 3000);
        c.time_left(Color::White, 10, 5);
        assert!(hard_ms(c.plan(Color::White, 81)) < 2000);
        c.time_left(Color::White, 0, 1);
        assert_eq!(c.plan(Color::White, 81), MovePlan::Instant);
    }

    #[test]
    fn absolute_splits_main_time() {
        let mut c = GtpClock::new(Duration::from_secs(10));
        c.time_settings(60, 0, 0);
        match c.plan(Color::Black, 81) {
            MovePlan::Search { soft, hard } => {
                assert!(hard.as_millis() < 60_000);
                assert!(soft.as_millis() <= 60_000 / 10);
            }
            MovePlan::Instant => panic!("60 s left"),
        }
        c.time_left(Color::Black, 1, 0);
        assert!(hard_ms(c.plan(Color::Black, 81)) < 1000);
        c.spend(Color::Black, Duration::from_secs(2));
        assert_eq!(c.plan(Color::Black, 81), MovePlan::Instant);
    }

    #[test]
    fn canadian_main_then_byo() {
        let mut c = GtpClock::new(Duration::from_secs(10));
        c.time_settings(2, 10, 5);
        c.spend(Color::Black, Duration::from_secs(3));
        // Main time ran out 1 s into the first period: 9 s for 5 stones.
        assert!(hard_ms(c.plan(Color::Black, 81)) < 9000 / 5);
        c.time_settings(1, 1, 0);
        assert_eq!(c.system(), &TimeSystem::Unlimited);
    }
}
