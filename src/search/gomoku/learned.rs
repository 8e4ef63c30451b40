//! What the wing's learned tables ([`super::patpolicy`], [`super::ordering`]) have in
//! common: their weight files.
//!
//! A weight file is an eight-byte magic naming the table, then its weights as little-endian
//! `f32`, nothing else; a file is read only when its size is exactly that of its table and
//! every weight is finite, so a table never holds a weight that would poison every logit it
//! enters.

/// Why [`read_weights`] refused a file; each table turns it into its own error type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WeightFileError {
    /// Wrong size or magic: what was found and what was expected, in words.
    Format(String),
    /// The weight at this index is NaN or infinite.
    NotFinite(usize),
}

/// Reads a weight file of exactly `count` weights after `magic`.
pub fn read_weights(b: &[u8], magic: &[u8; 8], count: usize) -> Result<Vec<f32>, WeightFileError> {
    let want = magic.len() + 4 * count;
    if b.len() != want || &b[..magic.len()] != magic {
        return Err(WeightFileError::Format(format!(
            "{} bytes, expected {want} starting with {:?}",
            b.len(),
            String::from_utf8_lossy(magic).trim_end()
        )));
    }
    let mut w = Vec::with_capacity(count);
    for (i, c) in b[magic.len()..].chunks_exact(4).enumerate() {
        let x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        if !x.is_finite() {
            return Err(WeightFileError::NotFinite(i));
        }
        w.push(x);
    }
    Ok(w)
}

/// The bytes of a weight file: `magic`, then the weights.
pub fn write_weights(magic: &[u8; 8], w: &[f32]) -> Vec<u8> {
    let mut b = Vec::with_capacity(magic.len() + 4 * w.len());
    b.extend_from_slice(magic);
    for x in w {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b
}

#[cfg(test)]
mod tests {
    use super::super::ordering::OrderWeights;
    use super::super::patpolicy::PatternPolicy;
    use super::*;

    #[test]
    fn weight_files_round_trip_and_refuse_damage() {
        let magic = b"PCNTST1\n";
        let w = [0.5f32, -2.0, 0.0];
        let b = write_weights(magic, &w);
        assert_eq!(b.len(), 8 + 12);
        assert_eq!(read_weights(&b, magic, 3), Ok(w.to_vec()));
        assert_eq!(
            read_weights(&b[..19], magic, 3),
            Err(WeightFileError::Format(
                "19 bytes, expected 20 starting with \"PCNTST1\"".to_string()
            ))
        );
        assert!(matches!(
            read_weights(&b, b"PCNTST2\n", 3),
            Err(WeightFileError::Format(_))
        ));
        assert!(matches!(
            read_weights(b"short", magic, 0),
            Err(WeightFileError::Format(_))
        ));
        let mut inf = b.clone();
        inf[12..16].copy_from_slice(&f32::INFINITY.to_le_bytes());
        assert_eq!(
            read_weights(&inf, magic, 3),
            Err(WeightFileError::NotFinite(1))
        );
    }

    #[test]
    fn the_shipped_tables_are_rewritten_byte_for_byte() {
        let pat: &[u8] = include_bytes!("../../../weights/gomoku_patterns.bin");
        let p = PatternPolicy::from_bytes(pat).expect("pattern table");
        assert!(p.to_bytes() == pat);
        let ord: &[u8] = include_bytes!("../../../weights/gomoku_order.bin");
        let o = OrderWeights::from_bytes(ord).expect("ordering table");
        assert!(o.to_bytes() == ord);
    }
}
