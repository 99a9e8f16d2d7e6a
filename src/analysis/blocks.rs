//! Block averages: the mean of a correlated time series and its standard error from equal,
//! consecutive blocks (Flyvbjerg & Petersen). The blocks must be longer than the series'
//! correlation time for the error to be honest.

/// Mean and standard error of the mean from `n_blocks` equal, consecutive block averages (a
/// trailing remainder shorter than one block is dropped). None with fewer than 2 blocks or
/// fewer samples than blocks.
pub fn block_mean_sem(xs: &[f64], n_blocks: usize) -> Option<(f64, f64)> {
    if n_blocks < 2 || xs.len() < n_blocks {
        return None;
    }
    let len = xs.len() / n_blocks;
    let means: Vec<f64> = (0..n_blocks).map(|b| xs[b * len..(b + 1) * len].iter().sum::<f64>() / len as f64).collect();
    let mean = means.iter().sum::<f64>() / n_blocks as f64;
    let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n_blocks - 1) as f64;
    Some((mean, (var / n_blocks as f64).sqrt()))
}

/// Mean and standard error of the mean of independent values (blocks of one); None with
/// fewer than 2.
pub fn mean_sem(xs: &[f64]) -> Option<(f64, f64)> {
    block_mean_sem(xs, xs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_blocks() {
        // Blocks of 2: means 1.5, 3.5, 5.5 (the trailing 7 dropped); mean 3.5; sample variance
        // of the block means 4; standard error sqrt(4 / 3).
        let (m, e) = block_mean_sem(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], 3).unwrap();
        assert_eq!(m, 3.5);
        assert!((e - (4.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!(block_mean_sem(&[1.0; 5], 1).is_none());
        assert!(block_mean_sem(&[1.0; 5], 6).is_none());
        assert_eq!(block_mean_sem(&[2.0; 10], 5), Some((2.0, 0.0)));
    }
}
