"""Reads a sharded run's summary (stdin) and prints each machine's bytes a step against
all-reduce's optimum, 2 x model x (N - 1)/N each way in fp32 (bench/shard_bytes.sh)."""
import json
import sys

s = json.loads(sys.stdin.read())
n = len(s["shards"])
model = 4 * s["trainable_parameters"]
ideal = 2 * model * (n - 1) / n
print("model=%s values=%d machines=%d fp32_model_bytes=%d optimum_each_way=%.0f"
      % (s["model"], s["trainable_parameters"], n, model, ideal))
for sh in s["shards"]:
    print("%s: values %d-%d held_bytes=%d steps=%d sent=%.0f received=%.0f; in the %d steps "
          "every machine computed: sent=%.0f (%.4f of the optimum) received=%.0f (%.4f)"
          % (sh["machine"], sh["begin"], sh["end"], sh["held_bytes"], sh["steps_measured"],
             sh["bytes_sent_per_step"], sh["bytes_received_per_step"], sh["full_steps"],
             sh["bytes_sent_per_full_step"], sh["bytes_sent_per_full_step"] / ideal,
             sh["bytes_received_per_full_step"], sh["bytes_received_per_full_step"] / ideal))
