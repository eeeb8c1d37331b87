//! What both models share: reading a BERT configuration, its tokenizer (with the padding
//! and truncation *we* want, whatever `tokenizer.json` says) and its weights, and turning
//! a batch of encodings into tensors.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Encoding, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::ModelError;

pub(super) fn read_config(dir: &Path) -> Result<Config, ModelError> {
    let text = std::fs::read_to_string(dir.join("config.json"))
        .map_err(|e| ModelError::at(dir, format_args!("config.json: {e}")))?;
    serde_json::from_str(&text).map_err(|e| ModelError::at(dir, format_args!("config.json is not a BERT config: {e}")))
}

/// Reads the safetensors header only (8 bytes of length, then JSON): a truncated or
/// foreign file is caught without reading the weights.
pub(super) fn check_weights(dir: &Path) -> Result<(), ModelError> {
    use std::io::Read;
    let path = dir.join("model.safetensors");
    let mut file =
        std::fs::File::open(&path).map_err(|e| ModelError::at(dir, format_args!("model.safetensors: {e}")))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut len = [0u8; 8];
    let bad = || ModelError::at(dir, "model.safetensors is not a safetensors file");
    file.read_exact(&mut len).map_err(|_| bad())?;
    let len = u64::from_le_bytes(len);
    if len == 0 || len > 100 << 20 || 8 + len > size {
        return Err(bad());
    }
    let mut header = vec![0u8; len as usize];
    file.read_exact(&mut header).map_err(|_| bad())?;
    serde_json::from_slice::<serde_json::Value>(&header).map_err(|_| bad())?;
    Ok(())
}

/// The tokenizer, padding each batch to its longest input and truncating at
/// `max_length` tokens. (Packaged tokenizers often pad and truncate everything to a
/// fixed length, which would waste work on short inputs and cut long ones short.)
pub(super) fn tokenizer(dir: &Path, max_length: usize) -> Result<Tokenizer, ModelError> {
    let mut tok = Tokenizer::from_file(dir.join("tokenizer.json"))
        .map_err(|e| ModelError::at(dir, format_args!("tokenizer.json: {e}")))?;
    let pad_id = tok.token_to_id("[PAD]").unwrap_or(0);
    tok.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        pad_id,
        pad_token: "[PAD]".into(),
        ..Default::default()
    }));
    tok.with_truncation(Some(TruncationParams { max_length, ..Default::default() }))
        .map_err(|e| ModelError::at(dir, format_args!("tokenizer truncation: {e}")))?;
    Ok(tok)
}

/// The BERT encoder and its weights (read into memory: no unsafe memory map), with the
/// `VarBuilder` for any head on top.
pub(super) fn load(dir: &Path, config: &Config) -> Result<(BertModel, VarBuilder<'static>), ModelError> {
    let bytes = std::fs::read(dir.join("model.safetensors"))
        .map_err(|e| ModelError::at(dir, format_args!("model.safetensors: {e}")))?;
    let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu)
        .map_err(|e| ModelError::at(dir, format_args!("model.safetensors: {e}")))?;
    let model = BertModel::load(vb.clone(), config)
        .map_err(|e| ModelError::at(dir, format_args!("weights do not fit config.json: {e}")))?;
    Ok((model, vb))
}

/// Token ids, token type ids and attention mask of a padded batch, as `[batch, len]`.
pub(super) struct Batch {
    pub ids: Tensor,
    pub type_ids: Tensor,
    pub mask: Tensor,
}

impl Batch {
    pub(super) fn new(encodings: &[Encoding]) -> candle_core::Result<Batch> {
        let n = encodings.len();
        let len = encodings.iter().map(|e| e.get_ids().len()).max().unwrap_or(0);
        let (mut ids, mut types, mut mask) =
            (Vec::with_capacity(n * len), Vec::with_capacity(n * len), Vec::with_capacity(n * len));
        for e in encodings {
            // Padding is per batch; pad here as well in case the caller built encodings
            // one by one.
            let pad = len - e.get_ids().len();
            ids.extend(e.get_ids().iter().copied().chain(std::iter::repeat_n(0, pad)));
            types.extend(e.get_type_ids().iter().copied().chain(std::iter::repeat_n(0, pad)));
            mask.extend(e.get_attention_mask().iter().copied().chain(std::iter::repeat_n(0, pad)));
        }
        let dev = Device::Cpu;
        Ok(Batch {
            ids: Tensor::from_vec(ids, (n, len), &dev)?,
            type_ids: Tensor::from_vec(types, (n, len), &dev)?,
            mask: Tensor::from_vec(mask, (n, len), &dev)?,
        })
    }
}

pub(super) fn candle_err(e: impl std::fmt::Display) -> ModelError {
    ModelError(format!("model run failed: {e}"))
}
