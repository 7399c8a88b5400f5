//! Complex-number and Fourier-transform operators: `view_as_real`/`view_as_complex`,
//! `real`/`imag`, the conjugation family, `angle`, `complex`, `polar`, and `torch.fft.*` with
//! ATen's `_fft_c2c`/`_fft_r2c`/`_fft_c2r` primitives; `hash_tensor`.

use ts_tensor::ops::fft::{fftfreq, rfftfreq};
use ts_tensor::ops::istft::IstftOptions;
use ts_tensor::ops::stft::StftOptions;
use ts_tensor::{complex, polar, Error};

use super::def;
use crate::registry::Registry;

/// Registers the complex and FFT operators.
pub fn register(r: &Registry) {
    register_complex(r);
    register_fft(r);
}

fn register_complex(r: &Registry) {
    def(r, "aten::view_as_real", |a| a.t(0)?.view_as_real());
    def(r, "aten::view_as_complex", |a| a.t(0)?.view_as_complex());
    def(r, "aten::real", |a| a.t(0)?.real());
    def(r, "aten::imag", |a| a.t(0)?.imag());
    def(r, "aten::conj", |a| a.t(0)?.conj());
    def(r, "aten::_conj", |a| a.t(0)?.conj());
    def(r, "aten::conj_physical", |a| a.t(0)?.conj_physical());
    def(r, "aten::_conj_physical", |a| a.t(0)?.conj_physical());
    def(r, "aten::conj_physical_", |a| {
        let t = a.t(0)?;
        t.conj_physical_()?;
        Ok(t.clone())
    });
    def(r, "aten::resolve_conj", |a| Ok(a.t(0)?.resolve_conj()));
    def(r, "aten::resolve_neg", |a| Ok(a.t(0)?.resolve_neg()));
    def(r, "aten::is_conj", |a| Ok(a.t(0)?.is_conj()));
    def(r, "aten::is_neg", |a| Ok(a.t(0)?.is_neg()));
    def(r, "aten::is_complex", |a| Ok(a.t(0)?.is_complex()));
    def(r, "aten::isreal", |a| a.t(0)?.isreal());
    def(r, "aten::angle", |a| a.t(0)?.angle());
    def(r, "aten::complex", |a| complex(a.t(0)?, a.t(1)?));
    def(r, "aten::polar", |a| polar(a.t(0)?, a.t(1)?));
    def(r, "aten::hash_tensor", |a| {
        a.t(0)?.hash_tensor(&a.ints(1)?, a.b(2)?, a.int(3)?)
    });
    def(r, "aten::adjoint", |a| a.t(0)?.transpose(-2, -1)?.conj());
}

macro_rules! fft_1d {
    ($r:expr, $($name:ident),* $(,)?) => {
        $(
            def($r, concat!("aten::", stringify!($name)), |a| {
                a.t(0)?.$name(a.oint(1)?, a.int(2)?, a.ostr(3)?)
            });
        )*
    };
}

macro_rules! fft_2d {
    ($r:expr, $($name:literal => $nd:ident),* $(,)?) => {
        $(
            def($r, concat!("aten::", $name), |a| {
                let s = a.oints(1)?;
                let dim = a.ints(2)?;
                a.t(0)?.$nd(s.as_deref(), Some(&dim), a.ostr(3)?)
            });
        )*
    };
}

macro_rules! fft_nd {
    ($r:expr, $($name:ident),* $(,)?) => {
        $(
            def($r, concat!("aten::", stringify!($name)), |a| {
                let s = a.oints(1)?;
                let dim = a.oints(2)?;
                a.t(0)?.$name(s.as_deref(), dim.as_deref(), a.ostr(3)?)
            });
        )*
    };
}

fn register_fft(r: &Registry) {
    def(r, "aten::_fft_c2c", |a| {
        a.t(0)?.fft_c2c(&a.ints(1)?, a.int(2)?, a.b(3)?)
    });
    def(r, "aten::_fft_r2c", |a| {
        a.t(0)?.fft_r2c(&a.ints(1)?, a.int(2)?, a.b(3)?)
    });
    def(r, "aten::_fft_c2r", |a| {
        a.t(0)?.fft_c2r(&a.ints(1)?, a.int(2)?, a.int(3)?)
    });
    fft_1d!(r, fft_fft, fft_ifft, fft_rfft, fft_irfft, fft_hfft, fft_ihfft);
    fft_2d!(
        r,
        "fft_fft2" => fft_fftn,
        "fft_ifft2" => fft_ifftn,
        "fft_rfft2" => fft_rfftn,
        "fft_irfft2" => fft_irfftn,
        "fft_hfft2" => fft_hfftn,
        "fft_ihfft2" => fft_ihfftn,
    );
    fft_nd!(r, fft_fftn, fft_ifftn, fft_rfftn, fft_irfftn, fft_hfftn, fft_ihfftn);
    def(r, "aten::fft_fftshift", |a| {
        a.t(0)?.fft_fftshift(a.oints(1)?.as_deref())
    });
    def(r, "aten::fft_ifftshift", |a| {
        a.t(0)?.fft_ifftshift(a.oints(1)?.as_deref())
    });
    def(r, "aten::stft", |a| {
        no_align(a.ob(8)?)?;
        a.t(0)?.stft(&StftOptions {
            n_fft: a.int(1)?,
            hop_length: a.oint(2)?,
            win_length: a.oint(3)?,
            window: a.ot(4)?,
            center: false,
            pad_mode: "constant",
            normalized: a.b(5)?,
            onesided: a.ob(6)?,
            return_complex: a.ob(7)?,
        })
    });
    def(r, "aten::stft.center", |a| {
        no_align(a.ob(10)?)?;
        a.t(0)?.stft(&StftOptions {
            n_fft: a.int(1)?,
            hop_length: a.oint(2)?,
            win_length: a.oint(3)?,
            window: a.ot(4)?,
            center: a.b(5)?,
            pad_mode: a.str(6)?,
            normalized: a.b(7)?,
            onesided: a.ob(8)?,
            return_complex: a.ob(9)?,
        })
    });
    def(r, "aten::istft", |a| {
        a.t(0)?.istft(&IstftOptions {
            n_fft: a.int(1)?,
            hop_length: a.oint(2)?,
            win_length: a.oint(3)?,
            window: a.ot(4)?,
            center: a.b(5)?,
            normalized: a.b(6)?,
            onesided: a.ob(7)?,
            length: a.oint(8)?,
            return_complex: a.b(9)?,
        })
    });
    def(r, "aten::fft_fftfreq", |a| {
        a.check_device(4)?;
        fftfreq(a.int(0)?, a.f(1)?, a.dtype(2)?)
    });
    def(r, "aten::fft_rfftfreq", |a| {
        a.check_device(4)?;
        rfftfreq(a.int(0)?, a.f(1)?, a.dtype(2)?)
    });
}

/// `align_to_window=True` (frames aligned to the window's centre) is not implemented.
fn no_align(align: Option<bool>) -> Result<(), Error> {
    if align == Some(true) {
        return Err(Error::runtime(
            "stft: align_to_window=True is not supported by torchscript-rs",
        ));
    }
    Ok(())
}
