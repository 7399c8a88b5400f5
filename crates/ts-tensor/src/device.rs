//! Where a tensor's data lives.

use std::fmt;

/// A device: the CPU, or a CUDA GPU with an index. Only the CPU has kernels today; CUDA is part of
/// the type so that types, schemas and archives can name it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Device {
    #[default]
    Cpu,
    /// A CUDA device; `None` is the current device (`"cuda"`).
    Cuda(Option<u8>),
}

impl Device {
    /// Parses `cpu`, `cuda`, `cuda:N` as `torch.device(str)` does.
    pub fn parse(s: &str) -> Option<Device> {
        match s {
            "cpu" => Some(Device::Cpu),
            "cuda" => Some(Device::Cuda(None)),
            _ => {
                let n = s.strip_prefix("cuda:")?;
                n.parse().ok().map(|i| Device::Cuda(Some(i)))
            }
        }
    }

    /// `"cpu"` or `"cuda"`: the device type without index.
    pub fn type_name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Cuda(_) => "cuda",
        }
    }

    /// The device index, or `None` when unspecified.
    pub fn index(self) -> Option<u8> {
        match self {
            Device::Cpu => None,
            Device::Cuda(i) => i,
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(None) => f.write_str("cuda"),
            Device::Cuda(Some(i)) => write!(f, "cuda:{i}"),
        }
    }
}
