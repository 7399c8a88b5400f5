//! The custom classes quantized models save: `torch.classes.quantized.LinearPackedParamsBase`,
//! `Conv2dPackedParamsBase` and `torch.classes.rnn.CellParamsBase`.
//!
//! PyTorch implements them in C++; here an instance is an object of the class's placeholder
//! type (the one schemas name, so operator matching sees the right type) whose single slot is a
//! capsule holding the unpacked weights. `__setstate__`/`__getstate__` use PyTorch's state
//! layouts, so archives load and save as PyTorch writes them.

use std::any::Any;
use std::sync::Arc;

use ts_core::ivalue::Capsule;
use ts_core::types::ClassType;
use ts_core::{IValue, Type, TypeRef};
use ts_tensor::quantized::{DynamicLinearWeights, DynamicLstmCell, QConvParams};
use ts_tensor::{Error, Tensor};

/// `torch.classes.quantized.LinearPackedParamsBase`.
pub const LINEAR_PACKED: &str = "__torch__.torch.classes.quantized.LinearPackedParamsBase";
/// `torch.classes.quantized.Conv2dPackedParamsBase`.
pub const CONV2D_PACKED: &str = "__torch__.torch.classes.quantized.Conv2dPackedParamsBase";
/// `torch.classes.rnn.CellParamsBase`.
pub const CELL_PARAMS: &str = "__torch__.torch.classes.rnn.CellParamsBase";

/// The custom classes this library implements.
pub const CUSTOM_CLASSES: [&str; 3] = [LINEAR_PACKED, CONV2D_PACKED, CELL_PARAMS];

/// The weights of a prepacked linear layer (qint8 weight, float bias).
#[derive(Clone, Debug)]
pub struct LinearPacked {
    pub weight: Tensor,
    pub bias: Option<Tensor>,
}

/// The weights and geometry of a prepacked 2-d convolution.
#[derive(Clone, Debug)]
pub struct Conv2dPacked {
    pub weight: Tensor,
    pub bias: Option<Tensor>,
    pub params: QConvParams,
    pub output_padding: [i64; 2],
    pub transposed: bool,
}

/// The parameters of one dynamically quantized LSTM cell (`quantized_dynamic` cell params).
#[derive(Clone, Debug)]
pub struct CellParams {
    pub cell: DynamicLstmCell,
    /// The biases as the state lists them (`b_ih`, `b_hh`).
    pub biases: Vec<Tensor>,
    pub packed: [IValue; 2],
}

/// The type of custom class `name` (the placeholder schemas refer to).
pub fn class_type(name: &str) -> Arc<ClassType> {
    match &*ts_core::type_parser::named_class_placeholder(name) {
        Type::Class(c) => c.clone(),
        _ => unreachable!("named_class_placeholder always makes a class type"),
    }
}

/// The type of custom class `name` as a `TypeRef`, when it is one this library implements.
pub fn custom_class_type(name: &str) -> Option<TypeRef> {
    CUSTOM_CLASSES
        .contains(&name)
        .then(|| ts_core::type_parser::named_class_placeholder(name))
}

/// A new instance of custom class `name` holding `payload`.
pub fn wrap<T: Any + Send + Sync>(name: &str, payload: T) -> IValue {
    IValue::object(
        class_type(name),
        vec![IValue::Capsule(Arc::new(Capsule(Box::new(payload))))],
    )
}

/// The payload of an instance of custom class `name`.
pub fn payload<T: Any + Clone>(v: &IValue, name: &str) -> Result<T, Error> {
    let short = name.rsplit('.').next().unwrap_or(name);
    let wrong = || {
        Error::runtime(format!(
            "expected a {short} object, got a value of type {}",
            v.tag_name()
        ))
    };
    let IValue::Object(o) = v else {
        return Err(wrong());
    };
    if o.class.name != name {
        return Err(wrong());
    }
    let slots = o.slots.read();
    match slots.first() {
        Some(IValue::Capsule(c)) => c.0.downcast_ref::<T>().cloned().ok_or_else(wrong),
        _ => Err(Error::runtime(format!(
            "the {short} object was never initialized (its __setstate__ did not run)"
        ))),
    }
}

fn tensor_of(v: &IValue, what: &str) -> Result<Tensor, Error> {
    match v {
        IValue::Tensor(t) => Ok(t.clone()),
        other => Err(Error::runtime(format!(
            "{what}: expected a tensor, got {}",
            other.tag_name()
        ))),
    }
}

fn opt_tensor_of(v: &IValue, what: &str) -> Result<Option<Tensor>, Error> {
    match v {
        IValue::None => Ok(None),
        v => tensor_of(v, what).map(Some),
    }
}

fn tuple_items(v: &IValue, n: usize, what: &str) -> Result<Vec<IValue>, Error> {
    match v {
        IValue::Tuple(t) if t.elements.len() == n => Ok(t.elements.clone()),
        other => Err(Error::runtime(format!(
            "{what}: expected a state tuple of {n} elements, got {}",
            other.tag_name()
        ))),
    }
}

fn list_items(v: &IValue, what: &str) -> Result<Vec<IValue>, Error> {
    match v {
        IValue::List(l) => Ok(l.items.read().clone()),
        other => Err(Error::runtime(format!(
            "{what}: expected a list, got {}",
            other.tag_name()
        ))),
    }
}

/// Checks a prepacked weight: a qint8 quantized tensor.
pub fn check_weight(w: &Tensor, dims: usize, what: &str) -> Result<(), Error> {
    let q = ts_tensor::quantized::quantizer_of(w, what)?;
    if q.dtype != ts_tensor::quantized::QDType::QInt8 || w.dim() != dims {
        return Err(Error::runtime(format!(
            "{what}: expected a {dims}-d qint8 weight, got a {}-d {} tensor",
            w.dim(),
            q.dtype.name()
        )));
    }
    Ok(())
}

/// Restores a custom class instance from its pickled state (its `__setstate__`).
pub fn set_state(name: &str, state: IValue) -> Result<IValue, Error> {
    match name {
        LINEAR_PACKED => {
            let what = "LinearPackedParamsBase.__setstate__";
            let items = tuple_items(&state, 2, what)?;
            let weight = tensor_of(&items[0], what)?;
            check_weight(&weight, 2, what)?;
            let bias = opt_tensor_of(&items[1], what)?;
            Ok(wrap(LINEAR_PACKED, LinearPacked { weight, bias }))
        }
        CONV2D_PACKED => conv_set_state(state),
        CELL_PARAMS => cell_set_state(state),
        other => Err(Error::runtime(format!(
            "the custom class {other} is not supported by torchscript-rs"
        ))),
    }
}

/// `Conv2dPackedParamsBase` state, version 3: `(3, config, [weight, bias])` where `config` is
/// `[2, stride.., padding.., dilation.., output_padding.., groups, flags]` (flags bit 0:
/// transposed).
fn conv_set_state(state: IValue) -> Result<IValue, Error> {
    let what = "Conv2dPackedParamsBase.__setstate__";
    let items = tuple_items(&state, 3, what)?;
    if !matches!(items[0], IValue::Int(3)) {
        return Err(Error::runtime(format!(
            "{what}: only version 3 of the packed convolution state is supported"
        )));
    }
    let config: Vec<i64> = list_items(&items[1], what)?
        .iter()
        .map(|v| match v {
            IValue::Int(i) => Ok(*i),
            _ => Err(Error::runtime(format!(
                "{what}: the configuration is not a list of ints"
            ))),
        })
        .collect::<Result<_, _>>()?;
    let tensors = list_items(&items[2], what)?;
    if config.len() != 11 || config[0] != 2 || tensors.len() != 2 {
        return Err(Error::runtime(format!(
            "{what}: expected the configuration of a 2-d convolution and two tensors"
        )));
    }
    let weight = tensor_of(&tensors[0], what)?;
    let bias = opt_tensor_of(&tensors[1], what)?;
    let pos = |v: i64| -> Result<usize, Error> {
        usize::try_from(v)
            .map_err(|_| Error::runtime(format!("{what}: negative configuration value {v}")))
    };
    let params = QConvParams {
        stride: [pos(config[1])?, pos(config[2])?],
        padding: [pos(config[3])?, pos(config[4])?],
        dilation: [pos(config[5])?, pos(config[6])?],
        groups: pos(config[9])?,
    };
    make_conv(
        weight,
        bias,
        params,
        [config[7], config[8]],
        config[10] & 1 == 1,
        what,
    )
}

/// A `Conv2dPackedParamsBase` object, after checking its weight.
pub fn make_conv(
    weight: Tensor,
    bias: Option<Tensor>,
    params: QConvParams,
    output_padding: [i64; 2],
    transposed: bool,
    what: &str,
) -> Result<IValue, Error> {
    check_weight(&weight, 4, what)?;
    if transposed {
        return Err(Error::runtime(format!(
            "{what}: quantized transposed convolutions are not supported by torchscript-rs"
        )));
    }
    Ok(wrap(
        CONV2D_PACKED,
        Conv2dPacked {
            weight,
            bias,
            params,
            output_padding,
            transposed,
        },
    ))
}

/// `CellParamsBase` state: `(kind, tensors, doubles, longs, packed)`; only the
/// `quantized_dynamic` kind (dynamic qint8 LSTM weights) is supported.
fn cell_set_state(state: IValue) -> Result<IValue, Error> {
    let what = "CellParamsBase.__setstate__";
    let items = tuple_items(&state, 5, what)?;
    let kind = match &items[0] {
        IValue::String(s) => s.as_str().to_string(),
        _ => {
            return Err(Error::runtime(format!(
                "{what}: the cell kind is not a string"
            )))
        }
    };
    if kind != "quantized_dynamic" {
        return Err(Error::runtime(format!(
            "{what}: cell parameters of kind '{kind}' are not supported by torchscript-rs (only 'quantized_dynamic')"
        )));
    }
    let biases = list_items(&items[1], what)?
        .iter()
        .map(|v| tensor_of(v, what))
        .collect::<Result<Vec<_>, _>>()?;
    let longs = list_items(&items[3], what)?;
    let packed = list_items(&items[4], what)?;
    if packed.len() != 2 || longs.len() != 1 {
        return Err(Error::runtime(format!(
            "{what}: expected two packed weights and a reduce_range flag"
        )));
    }
    let reduce_range = matches!(longs[0], IValue::Int(v) if v != 0);
    let ih: LinearPacked = payload(&packed[0], LINEAR_PACKED)?;
    let hh: LinearPacked = payload(&packed[1], LINEAR_PACKED)?;
    Ok(wrap(
        CELL_PARAMS,
        CellParams {
            cell: DynamicLstmCell {
                ih: DynamicLinearWeights {
                    weight: ih.weight,
                    bias: ih.bias,
                },
                hh: DynamicLinearWeights {
                    weight: hh.weight,
                    bias: hh.bias,
                },
                reduce_range,
            },
            biases,
            packed: [packed[0].clone(), packed[1].clone()],
        },
    ))
}
