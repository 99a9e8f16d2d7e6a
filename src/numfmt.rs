//! Numbers in messages: [`short`] writes any f64 in at most about a dozen characters, so an
//! error about a value someone typed as `1e308`, or a number computed from it, never prints
//! hundreds of digits. Every error and validation message that shows an f64 goes through it;
//! [`Shown`] is how the validation helpers take a value of any type (numbers through `short`).
//!
//! A leaf: imports nothing from the crate.

/// Most significant digits of a rounded value.
const DIGITS: usize = 4;

/// `x` for a person to read in a message: exactly as written when that is short (at most 5
/// significant digits, 0.001 <= |x| < 1e6: `2.5`, `119.8`, `0.0125`, `250000`), else rounded
/// to 4 significant digits, in plain decimals for 0.001 <= |x| < 1e4 (`3.142`, `0.06667`)
/// and in exponent notation beyond (`1e308`, `-1.798e308`, `1.235e-30`, `4.2e4`); `0`,
/// `NaN`, `inf` and `-inf` as such. Never longer than 11 characters (`-2.225e-308`).
pub fn short(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return "0".into();
    }
    let a = x.abs();
    let exact = format!("{x}");
    if (1e-3..1e6).contains(&a) && significant_digits(&exact) <= 5 {
        return exact;
    }
    // Rounded to DIGITS significant digits, and the exponent after rounding (9999.7 is
    // 1.000e4); read from the text, as 1.798e308, f64::MAX rounded up, is no f64.
    let text = format!("{x:.*e}", DIGITS - 1);
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let e: i32 = exponent.parse().unwrap_or(0);
    if (-3..4).contains(&e) {
        let decimals = (DIGITS as i32 - 1 - e) as usize;
        trim_zeros(format!("{x:.decimals$}"))
    } else {
        format!("{}e{exponent}", trim_zeros(mantissa.to_string()))
    }
}

/// Significant digits of a plain decimal (`0.0125` has 3, `250000` has 2).
fn significant_digits(text: &str) -> usize {
    let digits: String = text.chars().filter(|c| c.is_ascii_digit()).collect();
    let trimmed = digits.trim_start_matches('0').trim_end_matches('0');
    trimmed.len().max(1)
}

/// `1.500` -> `1.5`, `2.000` -> `2` (only after a decimal point).
fn trim_zeros(text: String) -> String {
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}

/// A value as an error shows it: numbers through [`short`] (never hundreds of digits), the rest
/// as written.
pub trait Shown {
    fn shown(&self) -> String;
}

impl Shown for f64 {
    fn shown(&self) -> String {
        short(*self)
    }
}

impl Shown for f32 {
    fn shown(&self) -> String {
        short(*self as f64)
    }
}

macro_rules! shown_as_written {
    ($($t:ty),*) => {$(
        impl Shown for $t {
            fn shown(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
shown_as_written!(u32, u64, usize, i32, i64, &str, &String, String);

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn extremes_stay_short() {
        assert_eq!(short(1e308), "1e308");
        assert_eq!(short(-1e308), "-1e308");
        assert_eq!(short(f64::MAX), "1.798e308");
        assert_eq!(short(-f64::MAX), "-1.798e308");
        assert_eq!(short(1e-30), "1e-30");
        assert_eq!(short(-1.23456789e-30), "-1.235e-30");
        assert_eq!(short(f64::MIN_POSITIVE), "2.225e-308");
        assert_eq!(short(5e-324), "4.941e-324");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(-0.0), "0");
        assert_eq!(short(f64::NAN), "NaN");
        assert_eq!(short(f64::INFINITY), "inf");
        assert_eq!(short(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn ordinary_values_read_as_written_or_rounded_to_four_digits() {
        assert_eq!(short(2.5), "2.5");
        assert_eq!(short(119.8), "119.8");
        assert_eq!(short(-0.3), "-0.3");
        assert_eq!(short(0.0125), "0.0125");
        assert_eq!(short(250000.0), "250000");
        assert_eq!(short(2.50001), "2.5");
        assert_eq!(short(0.1 + 0.2), "0.3");
        assert_eq!(short(std::f64::consts::PI), "3.142");
        assert_eq!(short(-1.0 / 15.0), "-0.06667");
        assert_eq!(short(1234.5678), "1235");
        assert_eq!(short(9999.77), "1e4");
        assert_eq!(short(123456.789), "1.235e5");
        assert_eq!(short(0.000123456), "1.235e-4");
        assert_eq!(short(0.0001), "1e-4");
    }

    #[test]
    fn never_longer_than_eleven_characters() {
        let mut x = 1.0f64;
        for k in 0..700 {
            for v in [x, -x, x * 1.23456789, -x * 9.87654321, 1.0 / x, -1.0 / (x * 7.7777777)] {
                let s = short(v);
                assert!(s.len() <= 11, "{v:e} -> {s} ({k})");
                if v.is_finite() && v != 0.0 {
                    let back: f64 = s.parse().unwrap();
                    assert!((back - v).abs() <= 1e-3 * v.abs(), "{v:e} -> {s}");
                }
            }
            x *= 3.0;
        }
    }
}
