<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>Format</name>
    <message>
        <source>GPU %1 (CUDA): %2, %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apple GPU (MPS): %1, %2 shared memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>CPU: %1, %n core(s), %2 RAM</source>
        <translation>
            <numerusform>CPU: %1, %n core, %2 RAM</numerusform>
            <numerusform>CPU: %1, %n cores, %2 RAM</numerusform>
        </translation>
    </message>
    <message>
        <source>unknown model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>R²</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not measured yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reward accuracy (%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>held-out reward accuracy %1%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>test accuracy %1%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>perplexity %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>R² %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>test loss %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 samples/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>perplexity %1, next-token accuracy %2%</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::ChartPanel</name>
    <message>
        <source>this machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss per step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Smoothed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Throughput per worker</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where each worker&apos;s time goes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seconds</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Communicate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wait</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reward accuracy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss, reward margin</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reward margin</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Held-out perplexity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Held-out R²</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Held-out loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::CompareDialog</name>
    <message numerus="yes">
        <source>Compare %n run(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Training loss (smoothed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Held-out figure per epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Started</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mode</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Machines</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Result</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Duration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens or samples/s</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::DataPreviewDialog</name>
    <message>
        <source>Reading the data…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preview of the data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens per document</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Documents</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The data cannot be previewed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n conversation(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n document(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>, %1 tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 longer than the context of %2 tokens (each is split across windows)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 cut by a window&apos;s edge</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 windows of %2 tokens, %3 of them left out for holding nothing to learn</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n line(s) cannot be read (listed below); a run stops at the first</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Line %1: %2 tokens, %3 trained</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::HistoryModel</name>
    <message>
        <source>Started</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finished</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Result</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1&apos;s model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lending to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lent to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>this machine: %n sample(s)</source>
        <translation>
            <numerusform>this machine: %n sample</numerusform>
            <numerusform>this machine: %n samples</numerusform>
        </translation>
    </message>
    <message>
        <source>%1, loss %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Duration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>lr %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation type="unfinished">
            <numerusform>%n epoch</numerusform>
            <numerusform>%n epochs</numerusform>
        </translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>LoRA %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n machine(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::HubDialog</name>
    <message>
        <source>Get a model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub: llama, qwen, smollm…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Access</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On the Hugging Face Hub</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On this computer (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hf_… from huggingface.co/settings/tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Access token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2: %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Downloaded: %n file(s), %1 (%2 were here already). Choose it below and press Use this model.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gated: needs a token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model on the Hub matches.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n model(s). Choose one and press Download.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Asking the Hub for %1&apos;s files…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (incomplete)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No token: open models download without one; gated ones (Llama, Gemma) need one that has accepted their terms.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A token is kept in the system&apos;s keychain.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The token in HF_TOKEN is used.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A token is kept in %1 (readable by you only).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::MainWindow</name>
    <message>
        <source>Export for Ollama / llama.cpp…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, the usual choice</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Q8_0: about %1, nearly as trained</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>F16: about %1, as trained</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>BF16: about %1, as trained</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How the weights are stored:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export as GGUF</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GGUF (*.gguf)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load a run description (JSON, as for tandem train --config)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save this run description as JSON</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>History</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ready. The demo is set up in New run: press Start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paused at step %1. Resume continues where it stopped.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping: saving a checkpoint…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training %1 on %2: %3 training samples, %4 steps per epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A machine left the run: %1. Its share goes to the others. Check that it is switched on and on this network; it can join again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine cannot join the network: %1. Another program may use the same ports; change them in Settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paired: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine is training for %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine finished its work for %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show Tandem</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pair a machine…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unpair</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unpair %1? It can no longer train with this machine until you pair the two again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export TorchScript…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export safetensors…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Tandem</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Load run description…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Save run description…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>S&amp;ettings…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Machines</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set up &amp;pairing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Add a machine by address…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add a machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>IP address or host name of the machine:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>User &amp;guide</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About Tandem</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About Tandem</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tandem %1
Trains one PyTorch model across your own machines.
Protocol version %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A device ran out of memory (%1). Lower the batch size or leave that machine out, then start again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The dataset cannot be used: %1. Check the folder or file and its format (the user guide lists the formats).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model cannot be used: %1. Save it with torch.jit.save after torch.jit.script, and check that it returns class scores.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A machine could not join: %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The run stopped with an error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No machine is chosen to train. Tick at least one machine under New run → Machines.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Starting; inviting %n machine(s)…</source>
        <translation>
            <numerusform>Starting; inviting %n machine…</numerusform>
            <numerusform>Starting; inviting %n machines…</numerusform>
        </translation>
    </message>
    <message>
        <source>Run folder: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>That run finished or has no checkpoint; start a new run instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot resume: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped at step %1; a checkpoint is saved.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The run stopped at step %1. Resume it from History.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The run failed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a run in History first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export as TorchScript</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export as safetensors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TorchScript (*.pt)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>safetensors (*.safetensors)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>That run has no checkpoint to export.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported to %1. In Python: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The export failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pair with %1?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2) wants to pair with this machine.

Does it show this code?

%3 %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save run description</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run description (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved the run description to %1; train it with: tandem train --config %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load run description</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paused</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Idle</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit Tandem</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A run is in progress. Stop it (a checkpoint is saved, so it can be resumed) and quit?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop and quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TorchScript (*.pt);;safetensors (*.safetensors)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try it…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Let a language model continue a prompt of yours.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch %1: %2, test loss %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The run finished: %1. Export the model from History.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pausing after the step in progress…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch %1 of %2 done · evaluating on %3 test samples… %4 %</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>device %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device ID: %1
Address: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop lending</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>End this machine&apos;s part in the other machine&apos;s run; the run goes on without it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine is %1 (device %2), listening on port %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Hugging Face folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export adapters (PEFT)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training for %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine finished its work for %1. The charts show its part of that run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1 (device %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: receiving the model and the data…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 paused the run; this machine waits.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 on %2: waiting for the first step…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>step %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this machine&apos;s share %1 %</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>loss %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 on %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine is lending its device to another run: press Stop lending first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mode: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model cannot be used: %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export the Hugging Face folder as</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export the adapters as</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resuming…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ready: press Start to train with these settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch %1 of %2 · step %3 of %4 · elapsed %5 · about %6 left · %7 · loss %8</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finished: %1, %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine lent its device to that run; its model is on the machine that ran it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New run like this</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Puts this run&apos;s settings in the New run form.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No file manager opened the folder. The run&apos;s files are in %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not started.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model cannot be used: %1. The user guide lists the model families Tandem reads.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, hardly smaller here: this model&apos;s rows are not whole blocks of 256 values, which 4 bits need, so they are stored at 5 to 8 bits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>That run&apos;s record has no settings to start from: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine finished its work for %1 before its first step.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 stopped lending itself to this run. Its share goes to the others.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notes…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose two or more runs (Ctrl+click) to see their curves and settings side by side.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notes on %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What to remember of this run (shown in History and when comparing runs):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 unpaired this machine. To train together again, pair the two (Machines → Set up pairing).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported to %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ollama is not installed on this machine; where it is: %1. LM Studio and llama.cpp open the file as it is.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Added to Ollama as %1: ollama run %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ollama could not add it (%1). By hand: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Adding it to Ollama as %1…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::PeerModel</name>
    <message>
        <source>Machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Devices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Role</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device ID %1
%2
Tandem %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (this machine)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Online</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Offline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Online, but its Tandem %1 cannot work with this one: install the same version on both</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Online, paired</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Online, not paired</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Idle</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Coordinator</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Coordinator and worker</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Idle: would slow the run (%1 ms a step before its first sample, against a %2 ms step)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Idle: slowed the run (its steps took %1 ms, against %2 ms without it)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The run measures it again after a few dozen steps, then less often while it would still slow the run, and gives it a share again when it would make steps shorter: when its load lifts, its link gets faster, or the batch grows.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Worker</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device ID</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine&apos;s part of each step&apos;s samples, as the run assigns them: the machine that lends its device shows the same figure</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In a sharded run: which range of the trainable values this machine owns, what it keeps for it (the fp32 weights, the optimizer&apos;s state and the gradients&apos; sum), and the bytes its links sent and received in the last step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2, %3, %4 a step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2, %3</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::RunForm</name>
    <message>
        <source>Text file (bytes, or a Hugging Face model&apos;s tokenizer)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON Lines of documents (&quot;text&quot; a line; a Hugging Face model)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat conversations (JSON Lines of &quot;messages&quot;; a Hugging Face model)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl *.json);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mnist-cnn: convolutional network for 28×28 images</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mlp: small fully connected network</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>resnet8: small ResNet for 32×32 colour images</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your TorchScript file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>model.pt saved with torch.jit.save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fashion-MNIST (built in)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fashion-MNIST folder (IDX files)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MNIST folder (IDX files)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CIFAR-10 folder (binary version)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Machines</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Synchronous: one model, exact (best on a fast network)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asynchronous: no waiting for the slowest machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Local SGD: several local steps per exchange (slow networks)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Automatic: measures the network, then synchronous or streaming</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Streaming local SGD: exchanges overlap training (Wi-Fi)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>8-bit blocks (a quarter of the traffic)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>4-bit blocks (an eighth of the traffic)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Local SGD updates</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mode</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>32-bit floats (exact)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>16-bit floats (half the traffic)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bfloat16 (half the traffic, wider range)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wire precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SGD with momentum</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>constant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cosine decay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>warm-up steps: </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch (all machines)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not a run description: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a TorchScript model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TorchScript (*.pt *.pth);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the dataset folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a TorchScript file for the model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose where the dataset is.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check model and data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Best available: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device on this machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bfloat16 autocast (faster on recent CPUs and GPUs)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>16-bit autocast (NVIDIA and Apple GPUs)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compute precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>gpt: small language model over the bytes of a text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV file (label= or target= column and numbers)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Token file (nanoGPT .bin)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NumPy arrays (.npz with x_train, y_train)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Image folder (one subfolder per class)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Automatic: from the model&apos;s output and the data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cross-entropy (classes, next token)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean squared error (regression)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean absolute error (regression)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Huber (regression with outliers)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Binary cross-entropy (several labels each)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model&apos;s own loss() method</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a .csv file[,target=COLUMN to predict a number]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a text file[,context=256]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a .bin file[,dtype=uint16][,context=256]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a folder of class folders[,size=64]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the dataset file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV (*.csv);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text (*.txt *.md);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Token files (*.bin);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NumPy (*.npz);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all of them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train on the first N training samples only; 0 uses them all.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training samples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A Hugging Face folder… (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>empty: train every weight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Low-rank adapters: only they train, the model&apos;s own weights stay frozen. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recompute activations (less memory, more time)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a folder with config.json and model.safetensors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a Hugging Face model folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the Hugging Face model&apos;s folder.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base as stored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base in 8 bits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base in 4 bits (QLoRA)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The frozen model&apos;s own weights in 4 bits (nf4) take about a quarter of bf16&apos;s memory: a 7-8B model fits a 12 GB card</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Q4_K_M: smallest, about 4.9 bits a weight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Q8_0: 8.5 bits a weight, close to the original</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>F16: 16 bits, as trained</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>BF16: 16 bits, as trained</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>At the end of the run, also write model.gguf and model.Modelfile in the run&apos;s folder: `ollama create NAME -f model.Modelfile` adds it to Ollama, and LM Studio and llama.cpp open model.gguf as it is</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How many tokens the model sees at once: each training window holds this many, and predicts each next one.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>= %1 tokens a step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch set to %1 for this data; set it yourself to keep another.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preference pairs (JSON Lines of &quot;prompt&quot;, &quot;chosen&quot; and &quot;rejected&quot;; a Hugging Face model)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>DPO (preference pairs; LoRA adapters, whose base is the reference)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ORPO (preference pairs; no reference model)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>DPO&apos;s β: how far the model may move from the reference. ORPO&apos;s λ: the weight of the preference term beside the chosen answer&apos;s loss.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preference strength (β, λ)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The layers that get adapters. Checked at first: those the model&apos;s family adapts by default.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Adapted layers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preview…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The first conversations as the model will read them, the tokens that train, the lengths against the context, and any line that cannot be read.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From the Hub…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub and download a model, or choose one already downloaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>optional: how History will name this run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Split the weights and the optimizer across the machines</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each machine keeps one range of the fp32 weights, of the optimizer&apos;s state and of the gradients&apos; sum, and steps it itself: a full fine-tune can then need more memory than any one machine has. For synchronous and local SGD runs that train every weight, on more than one machine.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::SettingsDialog</name>
    <message>
        <source>Choose…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this computer&apos;s host name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Machine name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Discovery port (UDP)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pairing port (TCP)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>any free port</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training port (TCP)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dataset cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none: base models are received</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train for paired machines while this one is idle</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A new language or new ports take effect when Tandem starts again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::SetupWizard</name>
    <message>
        <source>This machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tandem trains on every device listed here. Other machines will see this machine under its name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Devices:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device ID: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Find your other machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start Tandem on the other machine too. Machines on this network appear below; choose one and press Next.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>IP address or host name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add by address</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing yet? Check that Tandem runs on the other machine and that both are on the same network. Firewalls must allow UDP port 47300 and TCP port 47301. On a Mac, allow Tandem under System Settings → Privacy &amp; Security → Local Network. Some Wi-Fi networks block discovery: then add the other machine by its address.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>To train on this machine alone, press Next without choosing a machine.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pair</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check that %1 shows the same code:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for the other machine to confirm…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paired with %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Press Next.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nobody answered in time.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Press Try again, and confirm the code on both machines within a minute.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You said the codes differ. Nothing was paired.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The other machine said the codes differ. Nothing was paired.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Codes that differ can mean that another device is answering in place of your machine. Check that you chose the right machine, then try again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The other machine refused.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It may be busy or have refused several attempts: wait a minute and try again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not reach the other machine.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check that Tandem is running there and that its firewall allows TCP port 47301.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pairing failed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try again. If this repeats, see Troubleshooting in the user guide.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 and %2 are paired. They find each other on this network from now on; Tandem shares the training between them.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is ready to train on its own. You can pair another machine at any time from Machines → Set up pairing.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Press Finish to open the dashboard. Its New run tab is set up for the demo (mnist-cnn on Fashion-MNIST): press Start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set up Tandem</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finish</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt; &amp;Back</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Next &gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Both machines show a code. When the codes are the same, no other device sits between the two.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What was set up, and what comes next.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 and %2 are paired: %2 asked, and you confirmed the code here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs started on %1 can now use this machine&apos;s devices. Keep Tandem open here: the dashboard shows the run while this machine takes part, with Stop lending to leave it. You can also start runs from here.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tandem::ui::SweepTab</name>
    <message>
        <source>A sweep description (JSON): a run with a &quot;sweep&quot; object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where the trials&apos; run folders and sweep.jsonl go</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paired machines run trials too</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continue</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continue the sweep in this folder: finished trials are kept, interrupted ones resume from their checkpoints</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export best…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a sweep file to start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trial</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a sweep description</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This sweep file cannot be used: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n trial(s), %1, searching %2. Results go to the folder above.</source>
        <translation>
            <numerusform>%n trial, %1, searching %2. Results go to the folder above.</numerusform>
            <numerusform>%n trials, %1, searching %2. Results go to the folder above.</numerusform>
        </translation>
    </message>
    <message>
        <source>That folder already holds a sweep: press Continue to go on with it, or choose another folder.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot continue: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>%n epoch</numerusform>
            <numerusform>%n epochs</numerusform>
        </translation>
    </message>
    <message>
        <source>test loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>test accuracy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every trial</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sweep did not start: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>queued</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting for promotion</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>finished</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped early</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trial %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (log10)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 against %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trials</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>best</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Finished: %n trial(s) in %1 s.</source>
        <translation>
            <numerusform>Finished: %n trial in %1 s.</numerusform>
            <numerusform>Finished: %n trials in %1 s.</numerusform>
        </translation>
    </message>
    <message>
        <source>Stopped; Continue resumes it from the checkpoints.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Best: trial %1 (%2), %3.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n trial(s) started; running: %2; devices: %3.</source>
        <translation>
            <numerusform>%1 of %n trial started; running: %2; devices: %3.</numerusform>
            <numerusform>%1 of %n trials started; running: %2; devices: %3.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::TryDialog</name>
    <message>
        <source> tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only the likeliest tokens that together make up this much probability are drawn from.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tuned</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reference: the model before tuning</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answer as in a chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> bytes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Length</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not generate: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), %1 tokens/s</source>
        <translation>
            <numerusform>%n token, %1 tokens/s</numerusform>
            <numerusform>%n tokens, %1 tokens/s</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not generate.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped: %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done: %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A message for the model, or text to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text for the model to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optional: how the model should answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writes your messages with the model&apos;s chat template and shows the assistant&apos;s answers; off, the model continues your text.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>0 always takes the likeliest next token; higher values vary more.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
