//! Which vector instructions the CPU backend's hot loops are compiled for, chosen once at
//! run time (AVX-512, AVX2+FMA, or the baseline), overridable with `ARGON_SIMD=base|avx2|avx512`
//! for comparisons. The loops themselves are generic; [`multiversion!`] stamps out one copy
//! per level so the same source runs everywhere at the best speed the machine allows.

use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimdLevel {
    Base,
    Avx2,
    Avx512,
}

impl SimdLevel {
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Base => "baseline",
            SimdLevel::Avx2 => "AVX2",
            SimdLevel::Avx512 => "AVX-512",
        }
    }
}

fn detect() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    {
        let avx512 = std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl");
        let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        let best = if avx512 {
            SimdLevel::Avx512
        } else if avx2 {
            SimdLevel::Avx2
        } else {
            SimdLevel::Base
        };
        match std::env::var("ARGON_SIMD").as_deref() {
            Ok("base") => SimdLevel::Base,
            Ok("avx2") if avx2 => SimdLevel::Avx2,
            Ok("avx512") if avx512 => SimdLevel::Avx512,
            _ => best,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        SimdLevel::Base
    }
}

/// The level in use by this process.
pub fn level() -> SimdLevel {
    static LEVEL: OnceLock<SimdLevel> = OnceLock::new();
    *LEVEL.get_or_init(detect)
}

/// Defines `$name` dispatching to copies of the `#[inline(always)]` generic function `$body`
/// compiled for each [`SimdLevel`]. Usage:
/// `multiversion!(fn name<generics>(args) -> Ret = body::<generics>);`
macro_rules! multiversion {
    (
        $vis:vis fn $name:ident < $($g:ident : $b:path),* ; $(const $c:ident : $ct:ty),* >
        ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? = $body:ident
    ) => {
        $vis fn $name<$($g: $b),* , $(const $c: $ct),*>($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
                fn avx512<$($g: $b),* , $(const $c: $ct),*>($($arg: $ty),*) $(-> $ret)? {
                    $body::<$($g),* , $($c),*>($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                fn avx2<$($g: $b),* , $(const $c: $ct),*>($($arg: $ty),*) $(-> $ret)? {
                    $body::<$($g),* , $($c),*>($($arg),*)
                }
                match $crate::sim::cpu::simd::level() {
                    // SAFETY: the level was chosen from the CPU's detected features.
                    $crate::sim::cpu::simd::SimdLevel::Avx512 => unsafe { avx512::<$($g),* , $($c),*>($($arg),*) },
                    // SAFETY: as above.
                    $crate::sim::cpu::simd::SimdLevel::Avx2 => unsafe { avx2::<$($g),* , $($c),*>($($arg),*) },
                    $crate::sim::cpu::simd::SimdLevel::Base => $body::<$($g),* , $($c),*>($($arg),*),
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                $body::<$($g),* , $($c),*>($($arg),*)
            }
        }
    };
}

pub(crate) use multiversion;

/// `x` as a slice of `T` when `F` and `T` are the same type (used to hand generic data to
/// the hand-vectorised f32 / f64 loops).
pub fn cast_slice<F: 'static, T: 'static>(x: &[F]) -> Option<&[T]> {
    if std::any::TypeId::of::<F>() == std::any::TypeId::of::<T>() {
        // SAFETY: F and T are the same type, so layout and validity are identical.
        Some(unsafe { std::slice::from_raw_parts(x.as_ptr() as *const T, x.len()) })
    } else {
        None
    }
}

/// Mutable version of [`cast_slice`].
pub fn cast_slice_mut<F: 'static, T: 'static>(x: &mut [F]) -> Option<&mut [T]> {
    if std::any::TypeId::of::<F>() == std::any::TypeId::of::<T>() {
        // SAFETY: F and T are the same type, so layout and validity are identical.
        Some(unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr() as *mut T, x.len()) })
    } else {
        None
    }
}

/// `x` as a `&T` when `F` and `T` are the same type.
pub fn cast_ref<F: 'static, T: 'static>(x: &F) -> Option<&T> {
    if std::any::TypeId::of::<F>() == std::any::TypeId::of::<T>() {
        // SAFETY: F and T are the same type.
        Some(unsafe { &*(x as *const F as *const T) })
    } else {
        None
    }
}
