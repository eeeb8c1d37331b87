//! A sentence-embedding model (sentence-transformers layout, BERT family, e.g.
//! all-MiniLM-L6-v2): tokens → BERT → mean (or CLS) pooling → L2 normalisation, as
//! sentence-transformers computes it, so vectors match the model's own library.

use std::path::Path;

use candle_core::{D, DType, Tensor};
use candle_transformers::models::bert::BertModel;
use tokenizers::Tokenizer;

use super::ModelError;
use super::bert::{self, Batch, candle_err};

/// Inputs run through the model together: enough to keep the matrix code busy, small
/// enough that padding to the longest wastes little (inputs are sorted by length first).
const BATCH: usize = 16;

pub struct Encoder {
    model: BertModel,
    tokenizer: Tokenizer,
    dim: usize,
    cls_pooling: bool,
    max_tokens: usize,
}

impl Encoder {
    /// Loads the model: reads the weights, so this is the slow step (about a second).
    pub fn load(dir: &Path) -> Result<Encoder, ModelError> {
        let config = bert::read_config(dir)?;
        // sentence-transformers' own limit (256 for MiniLM) when the directory says it.
        let max_tokens = std::fs::read_to_string(dir.join("sentence_bert_config.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| v["max_seq_length"].as_u64())
            .map(|n| n as usize)
            .unwrap_or(512)
            .min(config.max_position_embeddings);
        let cls_pooling = std::fs::read_to_string(dir.join("1_Pooling/config.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .is_some_and(|v| v["pooling_mode_cls_token"] == true && v["pooling_mode_mean_tokens"] != true);
        let tokenizer = bert::tokenizer(dir, max_tokens)?;
        let (model, _) = bert::load(dir, &config)?;
        Ok(Encoder { model, tokenizer, dim: config.hidden_size, cls_pooling, max_tokens })
    }

    /// Length of every vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Longest input in tokens; the rest of a longer text is not read.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// One L2-normalised vector per text, in the order given.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for group in order.chunks(BATCH) {
            let inputs: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
            let encodings = self.tokenizer.encode_batch(inputs, true).map_err(candle_err)?;
            let vectors = self.run(&encodings).map_err(candle_err)?;
            for (&i, v) in group.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn run(&self, encodings: &[tokenizers::Encoding]) -> candle_core::Result<Vec<Vec<f32>>> {
        let batch = Batch::new(encodings)?;
        let hidden = self.model.forward(&batch.ids, &batch.type_ids, Some(&batch.mask))?;
        let pooled = if self.cls_pooling {
            hidden.narrow(1, 0, 1)?.squeeze(1)?
        } else {
            // Mean over real tokens only: padding is masked out of sum and count.
            let mask = batch.mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
            summed.broadcast_div(&counts)?
        };
        let norms = pooled.sqr()?.sum_keepdim(D::Minus1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        let unit: Tensor = pooled.broadcast_div(&norms)?;
        unit.to_vec2::<f32>()
    }
}
