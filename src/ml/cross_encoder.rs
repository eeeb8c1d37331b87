//! A cross-encoder reranker: BERT for sequence classification (sentence-transformers
//! `CrossEncoder` layout: `bert.*`, `bert.pooler.dense`, `classifier`). The query and a
//! passage are read together and one logit says how well the passage answers it.

use std::path::Path;

use candle_core::{D, Tensor};
use candle_nn::{Linear, Module};
use candle_transformers::models::bert::BertModel;
use tokenizers::Tokenizer;

use super::ModelError;
use super::bert::{self, Batch, candle_err};

const BATCH: usize = 8;

pub struct CrossEncoder {
    model: BertModel,
    pooler: Linear,
    classifier: Linear,
    tokenizer: Tokenizer,
}

impl CrossEncoder {
    pub fn load(dir: &Path) -> Result<CrossEncoder, ModelError> {
        let config = bert::read_config(dir)?;
        let tokenizer = bert::tokenizer(dir, config.max_position_embeddings.min(512))?;
        let (model, vb) = bert::load(dir, &config)?;
        let h = config.hidden_size;
        // Heads live beside the encoder; saved models name the encoder `bert.` or not.
        let head = |name: &str, out: usize| {
            candle_nn::linear(h, out, vb.pp(name))
                .or_else(|_| candle_nn::linear(h, out, vb.pp(format!("bert.{name}"))))
                .map_err(|e| ModelError::at(dir, format_args!("{name}: {e}")))
        };
        let pooler = head("pooler.dense", h)?;
        let classifier = candle_nn::linear(h, 1, vb.pp("classifier"))
            .map_err(|e| ModelError::at(dir, format_args!("classifier (one label expected): {e}")))?;
        Ok(CrossEncoder { model, pooler, classifier, tokenizer })
    }

    /// A relevance score (the raw logit; higher is better) for each passage.
    pub fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, ModelError> {
        let mut out = Vec::with_capacity(passages.len());
        for group in passages.chunks(BATCH) {
            let pairs: Vec<(String, String)> = group.iter().map(|p| (query.to_owned(), (*p).to_owned())).collect();
            let encodings = self.tokenizer.encode_batch(pairs, true).map_err(candle_err)?;
            out.extend(self.run(&encodings).map_err(candle_err)?);
        }
        Ok(out)
    }

    fn run(&self, encodings: &[tokenizers::Encoding]) -> candle_core::Result<Vec<f32>> {
        let batch = Batch::new(encodings)?;
        let hidden = self.model.forward(&batch.ids, &batch.type_ids, Some(&batch.mask))?;
        let cls = hidden.narrow(1, 0, 1)?.squeeze(1)?;
        let pooled = self.pooler.forward(&cls)?.tanh()?;
        let logits: Tensor = self.classifier.forward(&pooled)?;
        logits.squeeze(D::Minus1)?.to_vec1::<f32>()
    }
}
