#pragma once

#include "model/internal.h"

// Model-internal: low-rank adapters (LoRA, Hu et al. 2021) on a Hugging Face model's linear
// layers. A targeted layer y = W x + b becomes y = W x + b + (alpha / r) B A dropout(x), with
// A [r, in] drawn as torch.nn.Linear draws a weight, B [out, r] zero (so training starts from
// the base model exactly), the base weights frozen in their own dtype and the adapters fp32.
// Adapters are saved as PEFT saves them (adapter_model.safetensors and adapter_config.json),
// so `PeftModel.from_pretrained` loads them onto the base folder. The layers a family's adapters
// can target, and PEFT's names for them, are the family table's (family.h).

#include "common/expected.h"
#include "model/hf/family.h"

#include <QString>
#include <QStringList>

namespace tandem {

// What a run holds a LoRA base's linear weights in (quant.h).
enum class BaseQuant { None, Nf4, Int8 };
// "nf4", "int8", "bf16" (None: the folder's own dtype).
QString baseQuantName(BaseQuant q);

struct LoraConfig {
    int64_t rank = 8;
    double alpha = 16;
    double dropout = 0;
    QStringList targets; // the layers' own names: q_proj, v_proj, c_attn, …
    // What the frozen base's linear weights are held in: their own dtype, nf4 or int8.
    BaseQuant base = BaseQuant::None;

    double scale() const { return alpha / double(rank); }
};

// `--lora r=R,alpha=A,dropout=P,base=nf4|int8|bf16,targets=q_proj,k_proj[,…]`: every key is
// optional (r=8, alpha=2r, dropout 0, the base in the folder's own dtype, the family's default
// targets). Errors name the key at fault.
Expected<LoraConfig> parseLoraSpec(const QString& spec, const Family& family);

} // namespace tandem
