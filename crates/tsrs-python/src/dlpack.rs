//! The DLPack protocol (`__dlpack__`, `__dlpack_device__`, `from_dlpack`): tensors cross to
//! and from PyTorch, NumPy and other array libraries without copies.
//!
//! Exporting hands out a `dltensor` capsule holding a `DLManagedTensor` that owns a handle to
//! the tensor (so its storage stays alive) until the consumer calls the deleter; importing
//! renames the producer's capsule to `used_dltensor` and calls its deleter when the last
//! tensor using the memory drops. This is the crate's FFI boundary: the `unsafe` here is the
//! C ABI of DLPack and of Python capsules.

use std::ffi::{c_void, CStr};

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use ts_tensor::{DType, Storage, Tensor};

const DLTENSOR: &CStr = c"dltensor";
const USED_DLTENSOR: &CStr = c"used_dltensor";
/// `kDLCPU` and `kDLCUDAHost` (pinned host memory, readable by the CPU).
const DEVICE_CPU: i32 = 1;
const DEVICE_CUDA_HOST: i32 = 3;

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// DLPack's (code, bits) of a dtype: int 0, uint 1, float 2, bfloat 4, complex 5, bool 6.
fn dl_dtype(d: DType) -> DLDataType {
    let (code, bits) = match d {
        DType::Bool => (6, 8),
        DType::UInt8 => (1, 8),
        DType::Int8 => (0, 8),
        DType::Int16 => (0, 16),
        DType::Int32 => (0, 32),
        DType::Int64 => (0, 64),
        DType::Float16 => (2, 16),
        DType::Float32 => (2, 32),
        DType::Float64 => (2, 64),
        DType::BFloat16 => (4, 16),
        DType::UInt16 => (1, 16),
        DType::UInt32 => (1, 32),
        DType::UInt64 => (1, 64),
        DType::Complex64 => (5, 64),
        DType::Complex128 => (5, 128),
    };
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

fn from_dl_dtype(t: DLDataType) -> Option<DType> {
    if t.lanes != 1 {
        return None;
    }
    Some(match (t.code, t.bits) {
        (6, 8) | (1, 1) => DType::Bool,
        (1, 8) => DType::UInt8,
        (0, 8) => DType::Int8,
        (0, 16) => DType::Int16,
        (0, 32) => DType::Int32,
        (0, 64) => DType::Int64,
        (2, 16) => DType::Float16,
        (2, 32) => DType::Float32,
        (2, 64) => DType::Float64,
        (4, 16) => DType::BFloat16,
        (1, 16) => DType::UInt16,
        (1, 32) => DType::UInt32,
        (1, 64) => DType::UInt64,
        (5, 64) => DType::Complex64,
        (5, 128) => DType::Complex128,
        _ => return None,
    })
}

/// What an exported capsule owns: the managed tensor (first, so its address is the box's),
/// the shape and strides it points to, and a handle keeping the data alive.
#[repr(C)]
struct Exported {
    managed: DLManagedTensor,
    shape: Vec<i64>,
    strides: Vec<i64>,
    _tensor: Tensor,
}

unsafe extern "C" fn delete_exported(m: *mut DLManagedTensor) {
    if !m.is_null() {
        // SAFETY: `manager_ctx` is the `Box<Exported>` leaked by `to_capsule`; the consumer
        // calls the deleter exactly once.
        unsafe { drop(Box::from_raw((*m).manager_ctx as *mut Exported)) };
    }
}

unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python (holding the GIL) when the capsule dies. A consumer renames it
    // to `used_dltensor` and takes over the deleter; if it is still `dltensor`, nobody took it.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, DLTENSOR.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, DLTENSOR.as_ptr()) as *mut DLManagedTensor;
            if let Some(d) = m.as_ref().and_then(|m| m.deleter) {
                d(m);
            }
        } else {
            ffi::PyErr_Clear();
        }
    }
}

/// A `dltensor` capsule viewing `t`.
pub fn to_capsule(py: Python<'_>, t: &Tensor) -> PyResult<Py<PyAny>> {
    let m = t.meta_snapshot();
    let mut ex = Box::new(Exported {
        managed: DLManagedTensor {
            dl_tensor: DLTensor {
                data: m.storage.as_mut_ptr() as *mut c_void,
                device: DLDevice {
                    device_type: DEVICE_CPU,
                    device_id: 0,
                },
                ndim: m.sizes.len() as i32,
                dtype: dl_dtype(m.dtype),
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: (m.offset * m.dtype.size()) as u64,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_exported),
        },
        shape: m.sizes.to_vec(),
        strides: m.strides.to_vec(),
        _tensor: t.clone(),
    });
    ex.managed.dl_tensor.shape = ex.shape.as_mut_ptr();
    ex.managed.dl_tensor.strides = ex.strides.as_mut_ptr();
    let raw = Box::into_raw(ex);
    // SAFETY: `raw` is a valid, uniquely owned box; the capsule points at its first field and
    // the destructor (or a consumer, through the deleter) frees it exactly once.
    unsafe {
        (*raw).managed.manager_ctx = raw as *mut c_void;
        let cap = ffi::PyCapsule_New(
            raw as *mut c_void,
            DLTENSOR.as_ptr(),
            Some(capsule_destructor),
        );
        if cap.is_null() {
            drop(Box::from_raw(raw));
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, cap).unbind())
    }
}

/// Calls a producer's deleter when the last tensor viewing its memory drops.
struct ImportedOwner(*mut DLManagedTensor);

// SAFETY: the pointer is only used once, in `drop`, to call the producer's deleter, which
// DLPack allows from any thread; the GIL is taken first because Python producers need it.
unsafe impl Send for ImportedOwner {}
// SAFETY: see above; shared references never touch the pointer.
unsafe impl Sync for ImportedOwner {}

impl Drop for ImportedOwner {
    fn drop(&mut self) {
        let m = self.0;
        Python::attach(|_| {
            // SAFETY: `m` came from a `dltensor` capsule that we renamed, so calling its deleter
            // once is now our job.
            unsafe {
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            }
        });
    }
}

/// A tensor viewing the memory of an object with `__dlpack__` (PyTorch tensors, NumPy
/// arrays, ...), without copying.
pub fn from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let py = obj.py();
    if obj.hasattr("__dlpack_device__")? {
        let (dev, _): (i32, i32) = obj.call_method0("__dlpack_device__")?.extract()?;
        if dev != DEVICE_CPU && dev != DEVICE_CUDA_HOST {
            return Err(PyBufferError::new_err(format!(
                "DLPack device type {dev} is not the CPU; tsrs tensors live in CPU memory"
            )));
        }
    }
    let capsule = obj.call_method0("__dlpack__")?;
    // SAFETY: a `dltensor` capsule holds a `DLManagedTensor*` (the DLPack protocol); the
    // producer keeps it valid until its deleter runs. We read it before taking ownership, so
    // on any error the capsule still owns it and frees it.
    unsafe {
        let m =
            ffi::PyCapsule_GetPointer(capsule.as_ptr(), DLTENSOR.as_ptr()) as *mut DLManagedTensor;
        if m.is_null() {
            return Err(PyErr::take(py).unwrap_or_else(|| {
                PyTypeError::new_err("__dlpack__ did not return a 'dltensor' capsule")
            }));
        }
        let dl = &(*m).dl_tensor;
        if dl.device.device_type != DEVICE_CPU && dl.device.device_type != DEVICE_CUDA_HOST {
            return Err(PyBufferError::new_err(
                "the DLPack tensor is not in CPU memory",
            ));
        }
        let dtype = from_dl_dtype(dl.dtype).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "DLPack dtype (code {}, {} bits, {} lanes) has no tsrs dtype",
                dl.dtype.code, dl.dtype.bits, dl.dtype.lanes
            ))
        })?;
        if dl.ndim < 0 || (dl.ndim > 0 && dl.shape.is_null()) {
            return Err(PyValueError::new_err("malformed DLPack tensor"));
        }
        let nd = dl.ndim as usize;
        let shape: Vec<i64> = if nd == 0 {
            Vec::new()
        } else {
            std::slice::from_raw_parts(dl.shape, nd).to_vec()
        };
        let strides: Vec<i64> = if dl.strides.is_null() || nd == 0 {
            ts_tensor::tensor::contiguous_strides(&shape).to_vec()
        } else {
            std::slice::from_raw_parts(dl.strides, nd).to_vec()
        };
        if shape.iter().any(|&n| n < 0) {
            return Err(PyValueError::new_err(
                "malformed DLPack tensor (negative size)",
            ));
        }
        let size = dtype.size() as i64;
        let numel: i64 = shape.iter().product();
        // The lowest and highest element offsets reached, to bound the memory.
        let (mut lo, mut hi) = (0i64, 0i64);
        if numel > 0 {
            for (&n, &s) in shape.iter().zip(&strides) {
                let reach = (n - 1) * s;
                if reach < 0 {
                    lo += reach;
                } else {
                    hi += reach;
                }
            }
        }
        let base = (dl.data as *mut u8).wrapping_add(dl.byte_offset as usize);
        if numel > 0 && (base.is_null() || !(base as usize).is_multiple_of(dtype.size())) {
            return Err(PyValueError::new_err(
                "the DLPack data is not aligned for its dtype",
            ));
        }
        let start = base.wrapping_offset((lo * size) as isize);
        let nbytes = if numel == 0 {
            0
        } else {
            ((hi - lo + 1) * size) as usize
        };
        if ffi::PyCapsule_SetName(capsule.as_ptr(), USED_DLTENSOR.as_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        let owner = Box::new(ImportedOwner(m));
        let storage =
            Storage::from_external(start, nbytes, owner).map_err(crate::errors::from_tensor)?;
        Tensor::from_parts(storage, &shape, &strides, (-lo) as usize, dtype)
            .map_err(crate::errors::from_tensor)
    }
}
