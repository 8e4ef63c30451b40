//! Small shared helpers: a deterministic PRNG, Zobrist key tables, the `on`/`off` switch
//! value, and large zeroed tables on huge pages ([`pages`]).

pub mod pages;

/// SplitMix64: a tiny, fast, deterministic PRNG. Used for Zobrist keys and
/// for every random choice the engine makes, so a fixed seed reproduces runs.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (`n > 0`); Lemire's multiply-shift.
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 32).wrapping_mul(n as u64) >> 32) as usize
    }

    /// A uniform float in `[0, 1)`.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Zobrist keys for `points` points and two colours, plus a side-to-move key.
#[derive(Clone, Debug)]
pub struct Zobrist {
    keys: Vec<[u64; 2]>,
    /// Xored in when White is to move.
    pub side: u64,
}

impl Zobrist {
    /// Keys for `points` points; the same `points` always gives the same keys.
    pub fn new(points: usize) -> Self {
        let mut rng = Rng::new(0x005E_ED0F_2026 ^ points as u64);
        let keys = (0..points)
            .map(|_| [rng.next_u64(), rng.next_u64()])
            .collect();
        Zobrist {
            keys,
            side: rng.next_u64(),
        }
    }

    /// The key of a stone of colour index `color` (0 black, 1 white) on `point`.
    #[inline]
    pub fn key(&self, point: usize, color: usize) -> u64 {
        self.keys[point][color]
    }
}

/// An `on` / `off` switch, read and written the same way wherever one appears (command-line
/// options, proof file headers).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OnOff {
    /// Enabled.
    On,
    /// Disabled.
    Off,
}

impl OnOff {
    /// Reads `on` or `off`.
    pub fn parse(s: &str) -> Option<OnOff> {
        match s {
            "on" => Some(OnOff::On),
            "off" => Some(OnOff::Off),
            _ => None,
        }
    }

    /// The switch of a flag.
    pub fn from_bool(on: bool) -> OnOff {
        if on {
            OnOff::On
        } else {
            OnOff::Off
        }
    }

    /// Whether it is on.
    pub fn is_on(self) -> bool {
        self == OnOff::On
    }

    /// `on` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            OnOff::On => "on",
            OnOff::Off => "off",
        }
    }
}

impl std::str::FromStr for OnOff {
    type Err = String;

    fn from_str(s: &str) -> Result<OnOff, String> {
        OnOff::parse(s).ok_or_else(|| format!("expected on or off, not '{s}'"))
    }
}

impl std::fmt::Display for OnOff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_off_reads_what_it_writes_and_nothing_else() {
        for v in [OnOff::On, OnOff::Off] {
            assert_eq!(OnOff::parse(v.as_str()), Some(v));
            assert_eq!(v.to_string().parse::<OnOff>(), Ok(v));
            assert_eq!(OnOff::from_bool(v.is_on()), v);
        }
        for bad in ["", "ON", "1", "true", "maybe", " on"] {
            assert_eq!(OnOff::parse(bad), None, "{bad:?}");
            assert!(bad.parse::<OnOff>().is_err());
        }
    }
}
