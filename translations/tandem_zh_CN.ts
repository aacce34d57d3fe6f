<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Format</name>
    <message>
        <source>GPU %1 (CUDA): %2, %3</source>
        <translation>GPU %1（CUDA）：%2，%3</translation>
    </message>
    <message>
        <source>Apple GPU (MPS): %1, %2 shared memory</source>
        <translation>Apple GPU（MPS）：%1，%2 共享内存</translation>
    </message>
    <message numerus="yes">
        <source>CPU: %1, %n core(s), %2 RAM</source>
        <translation>
            <numerusform>CPU：%1，%n 个核心，%2 内存</numerusform>
        </translation>
    </message>
    <message>
        <source>unknown model</source>
        <translation>未知型号</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>准确率 (%)</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>困惑度</translation>
    </message>
    <message>
        <source>R²</source>
        <translation>R²</translation>
    </message>
    <message>
        <source>Test loss</source>
        <translation>测试损失</translation>
    </message>
    <message>
        <source>not measured yet</source>
        <translation>尚未测量</translation>
    </message>
    <message>
        <source>Reward accuracy (%)</source>
        <translation>奖励准确率 (%)</translation>
    </message>
    <message>
        <source>held-out reward accuracy %1%</source>
        <translation>留出偏好对的奖励准确率 %1%</translation>
    </message>
    <message>
        <source>test accuracy %1%</source>
        <translation>测试准确率 %1%</translation>
    </message>
    <message>
        <source>perplexity %1</source>
        <translation>困惑度 %1</translation>
    </message>
    <message>
        <source>R² %1</source>
        <translation>R² %1</translation>
    </message>
    <message>
        <source>test loss %1</source>
        <translation>测试损失 %1</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 个词元/秒</translation>
    </message>
    <message>
        <source>%1 samples/s</source>
        <translation>%1 样本/秒</translation>
    </message>
    <message>
        <source>perplexity %1, next-token accuracy %2%</source>
        <translation>困惑度 %1，下一词元准确率 %2%</translation>
    </message>
</context>
<context>
    <name>tandem::ui::ChartPanel</name>
    <message>
        <source>this machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>训练损失</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Loss per step</source>
        <translation>每步损失</translation>
    </message>
    <message>
        <source>Smoothed</source>
        <translation>平滑后</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>准确率（%）</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>测试</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Throughput per worker</source>
        <translation>各工作节点吞吐量</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>样本/秒</translation>
    </message>
    <message>
        <source>Where each worker&apos;s time goes</source>
        <translation>各工作节点的时间分布</translation>
    </message>
    <message>
        <source>Seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>Compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <source>Communicate</source>
        <translation>通信</translation>
    </message>
    <message>
        <source>Wait</source>
        <translation>等待</translation>
    </message>
    <message>
        <source>Reward accuracy</source>
        <translation>奖励准确率</translation>
    </message>
    <message>
        <source>Loss, reward margin</source>
        <translation>损失、奖励差</translation>
    </message>
    <message>
        <source>Reward margin</source>
        <translation>奖励差</translation>
    </message>
    <message>
        <source>Held-out perplexity</source>
        <translation>留出数据困惑度</translation>
    </message>
    <message>
        <source>Held-out R²</source>
        <translation>留出数据 R²</translation>
    </message>
    <message>
        <source>Held-out loss</source>
        <translation>留出数据损失</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>词元/秒</translation>
    </message>
</context>
<context>
    <name>tandem::ui::CompareDialog</name>
    <message numerus="yes">
        <source>Compare %n run(s)</source>
        <translation>
            <numerusform>比较 %n 次训练</numerusform>
        </translation>
    </message>
    <message>
        <source>Training loss (smoothed)</source>
        <translation>训练损失（平滑）</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Held-out figure per epoch</source>
        <translation>每轮的留出数据指标</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>词元/秒</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>样本/秒</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>学习率计划</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>轮数</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>适配器（LoRA）</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>机器</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>时长</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>备注</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Tokens or samples/s</source>
        <translation>词元或样本/秒</translation>
    </message>
</context>
<context>
    <name>tandem::ui::DataPreviewDialog</name>
    <message>
        <source>Reading the data…</source>
        <translation>正在读取数据…</translation>
    </message>
    <message>
        <source>Preview of the data</source>
        <translation>数据预览</translation>
    </message>
    <message>
        <source>Tokens per document</source>
        <translation>每个文档的词元数</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>文档数</translation>
    </message>
    <message>
        <source>The data cannot be previewed: %1</source>
        <translation>无法预览数据：%1</translation>
    </message>
    <message numerus="yes">
        <source>%n conversation(s)</source>
        <translation>
            <numerusform>%n 段对话</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n document(s)</source>
        <translation>
            <numerusform>%n 个文档</numerusform>
        </translation>
    </message>
    <message>
        <source>, %1 tokens</source>
        <translation>，%1 个词元</translation>
    </message>
    <message>
        <source>%1 longer than the context of %2 tokens (each is split across windows)</source>
        <translation>%1 个长于 %2 个词元的上下文（每个都会跨窗口切分）</translation>
    </message>
    <message>
        <source>%1 cut by a window&apos;s edge</source>
        <translation>%1 个被窗口边界切开</translation>
    </message>
    <message>
        <source>%1 windows of %2 tokens, %3 of them left out for holding nothing to learn</source>
        <translation>%1 个 %2 词元的窗口，其中 %3 个因没有可学习的内容而被略过</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s) cannot be read (listed below); a run stops at the first</source>
        <translation>
            <numerusform>%n 行无法读取（列在下方）；训练会在第一处停止</numerusform>
        </translation>
    </message>
    <message>
        <source>Line %1: %2 tokens, %3 trained</source>
        <translation>第 %1 行：%2 个词元，%3 个参与训练</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>The context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>tandem::ui::HistoryModel</name>
    <message>
        <source>Started</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>%1&apos;s model</source>
        <translation>%1 的模型</translation>
    </message>
    <message>
        <source>Lending to %1</source>
        <translation>正在借给 %1</translation>
    </message>
    <message>
        <source>Lent to %1</source>
        <translation>已借给 %1</translation>
    </message>
    <message numerus="yes">
        <source>this machine: %n sample(s)</source>
        <translation>
            <numerusform>本机：%n 个样本</numerusform>
        </translation>
    </message>
    <message>
        <source>%1, loss %2</source>
        <translation>%1，损失 %2</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>时长</translation>
    </message>
    <message>
        <source>lr %1</source>
        <translation>学习率 %1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>%n 轮</numerusform>
        </translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation>批 %1</translation>
    </message>
    <message>
        <source>LoRA %1</source>
        <translation>LoRA %1</translation>
    </message>
    <message numerus="yes">
        <source>%n machine(s)</source>
        <translation>
            <numerusform>%n 台机器</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::HubDialog</name>
    <message>
        <source>Get a model</source>
        <translation>获取模型</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub: llama, qwen, smollm…</source>
        <translation>在 Hugging Face Hub 中搜索：llama、qwen、smollm…</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>下载量</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Access</source>
        <translation>访问</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>On the Hugging Face Hub</source>
        <translation>在 Hugging Face Hub 上</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation>使用此模型</translation>
    </message>
    <message>
        <source>On this computer (%1)</source>
        <translation>在这台电脑上（%1）</translation>
    </message>
    <message>
        <source>hf_… from huggingface.co/settings/tokens</source>
        <translation>hf_…，来自 huggingface.co/settings/tokens</translation>
    </message>
    <message>
        <source>Save token</source>
        <translation>保存令牌</translation>
    </message>
    <message>
        <source>Access token</source>
        <translation>访问令牌</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>%1 of %2: %3</source>
        <translation>%1 / %2：%3</translation>
    </message>
    <message numerus="yes">
        <source>Downloaded: %n file(s), %1 (%2 were here already). Choose it below and press Use this model.</source>
        <translation>
            <numerusform>已下载：%n 个文件，%1（其中 %2 个已在本机）。在下方选中它并点击“使用此模型”。</numerusform>
        </translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>正在搜索…</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>公开</translation>
    </message>
    <message>
        <source>Gated: needs a token</source>
        <translation>受限：需要令牌</translation>
    </message>
    <message>
        <source>No model on the Hub matches.</source>
        <translation>Hub 上没有匹配的模型。</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s). Choose one and press Download.</source>
        <translation>
            <numerusform>%n 个模型。选择一个并点击“下载”。</numerusform>
        </translation>
    </message>
    <message>
        <source>Asking the Hub for %1&apos;s files…</source>
        <translation>正在向 Hub 查询 %1 的文件…</translation>
    </message>
    <message>
        <source>%1 (incomplete)</source>
        <translation>%1（不完整）</translation>
    </message>
    <message>
        <source>No token: open models download without one; gated ones (Llama, Gemma) need one that has accepted their terms.</source>
        <translation>没有令牌：公开模型无需令牌即可下载；受限模型（Llama、Gemma）需要一个已接受其条款的令牌。</translation>
    </message>
    <message>
        <source>A token is kept in the system&apos;s keychain.</source>
        <translation>令牌保存在系统钥匙串中。</translation>
    </message>
    <message>
        <source>The token in HF_TOKEN is used.</source>
        <translation>使用 HF_TOKEN 中的令牌。</translation>
    </message>
    <message>
        <source>A token is kept in %1 (readable by you only).</source>
        <translation>令牌保存在 %1 中（仅您可读）。</translation>
    </message>
</context>
<context>
    <name>tandem::ui::MainWindow</name>
    <message>
        <source>Export for Ollama / llama.cpp…</source>
        <translation>导出到 Ollama / llama.cpp…</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, the usual choice</source>
        <translation>Q4_K_M：约 %1，常用选择</translation>
    </message>
    <message>
        <source>Q8_0: about %1, nearly as trained</source>
        <translation>Q8_0：约 %1，几乎与训练时相同</translation>
    </message>
    <message>
        <source>F16: about %1, as trained</source>
        <translation>F16：约 %1，与训练时相同</translation>
    </message>
    <message>
        <source>BF16: about %1, as trained</source>
        <translation>BF16：约 %1，与训练时相同</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>导出到 Ollama / llama.cpp</translation>
    </message>
    <message>
        <source>How the weights are stored:</source>
        <translation>权重的存储方式：</translation>
    </message>
    <message>
        <source>Export as GGUF</source>
        <translation>导出为 GGUF</translation>
    </message>
    <message>
        <source>GGUF (*.gguf)</source>
        <translation>GGUF (*.gguf)</translation>
    </message>
    <message>
        <source>Export Hugging Face folder…</source>
        <translation>导出 Hugging Face 文件夹…</translation>
    </message>
    <message>
        <source>Export adapters (PEFT)…</source>
        <translation>导出适配器（PEFT）…</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation>集群</translation>
    </message>
    <message>
        <source>Load…</source>
        <translation>载入…</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>Load a run description (JSON, as for tandem train --config)</source>
        <translation>载入训练描述（JSON，与 tandem train --config 相同）</translation>
    </message>
    <message>
        <source>Save this run description as JSON</source>
        <translation>将此训练描述保存为 JSON</translation>
    </message>
    <message>
        <source>New run</source>
        <translation>新建训练</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Ready. The demo is set up in New run: press Start.</source>
        <translation>就绪。演示已在“新建训练”中设置好：点击“开始”。</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Paused at step %1. Resume continues where it stopped.</source>
        <translation>已在第 %1 步暂停。点击“继续”从此处接着训练。</translation>
    </message>
    <message>
        <source>Stopping: saving a checkpoint…</source>
        <translation>正在停止：保存检查点…</translation>
    </message>
    <message>
        <source>Training %1 on %2: %3 training samples, %4 steps per epoch</source>
        <translation>正在 %2 上训练 %1：%3 个训练样本，每轮 %4 步</translation>
    </message>
    <message>
        <source>A machine left the run: %1. Its share goes to the others. Check that it is switched on and on this network; it can join again.</source>
        <translation>一台机器离开了训练：%1。它的份额分给其他机器。请检查它是否开机并在此网络中；它可以重新加入。</translation>
    </message>
    <message>
        <source>This machine cannot join the network: %1. Another program may use the same ports; change them in Settings.</source>
        <translation>本机无法加入网络：%1。可能有其他程序占用了相同端口；请在“设置”中更改端口。</translation>
    </message>
    <message>
        <source>Paired: %1</source>
        <translation>已配对：%1</translation>
    </message>
    <message>
        <source>This machine is training for %1.</source>
        <translation>本机正在为 %1 训练。</translation>
    </message>
    <message>
        <source>This machine finished its work for %1.</source>
        <translation>本机已完成为 %1 的工作。</translation>
    </message>
    <message>
        <source>Show Tandem</source>
        <translation>显示 Tandem</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>Pair a machine…</source>
        <translation>配对机器…</translation>
    </message>
    <message>
        <source>Unpair</source>
        <translation>取消配对</translation>
    </message>
    <message>
        <source>Unpair %1? It can no longer train with this machine until you pair the two again.</source>
        <translation>取消与 %1 的配对？在重新配对之前，它将无法与本机一起训练。</translation>
    </message>
    <message>
        <source>Export TorchScript…</source>
        <translation>导出为 TorchScript…</translation>
    </message>
    <message>
        <source>Export safetensors…</source>
        <translation>导出为 safetensors…</translation>
    </message>
    <message>
        <source>Resume run</source>
        <translation>继续训练</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>&amp;Tandem</source>
        <translation>Tandem(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Load run description…</source>
        <translation>载入训练描述(&amp;L)…</translation>
    </message>
    <message>
        <source>&amp;Save run description…</source>
        <translation>保存训练描述(&amp;S)…</translation>
    </message>
    <message>
        <source>S&amp;ettings…</source>
        <translation>设置(&amp;E)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Machines</source>
        <translation>机器(&amp;M)</translation>
    </message>
    <message>
        <source>Set up &amp;pairing…</source>
        <translation>设置配对(&amp;P)…</translation>
    </message>
    <message>
        <source>&amp;Add a machine by address…</source>
        <translation>按地址添加机器(&amp;A)…</translation>
    </message>
    <message>
        <source>Add a machine</source>
        <translation>添加机器</translation>
    </message>
    <message>
        <source>IP address or host name of the machine:</source>
        <translation>该机器的 IP 地址或主机名：</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>User &amp;guide</source>
        <translation>用户指南(&amp;G)</translation>
    </message>
    <message>
        <source>&amp;About Tandem</source>
        <translation>关于 Tandem(&amp;A)</translation>
    </message>
    <message>
        <source>About Tandem</source>
        <translation>关于 Tandem</translation>
    </message>
    <message>
        <source>Tandem %1
Trains one PyTorch model across your own machines.
Protocol version %2.</source>
        <translation>Tandem %1
在您自己的多台机器上训练同一个 PyTorch 模型。
协议版本 %2。</translation>
    </message>
    <message>
        <source>A device ran out of memory (%1). Lower the batch size or leave that machine out, then start again.</source>
        <translation>某个设备内存不足（%1）。请减小批大小或不使用该机器，然后重新开始。</translation>
    </message>
    <message>
        <source>The dataset cannot be used: %1. Check the folder or file and its format (the user guide lists the formats).</source>
        <translation>无法使用该数据集：%1。请检查文件夹或文件及其格式（用户指南列出了支持的格式）。</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. Save it with torch.jit.save after torch.jit.script, and check that it returns class scores.</source>
        <translation>无法使用该模型：%1。请在 torch.jit.script 之后用 torch.jit.save 保存，并确认它输出类别分数。</translation>
    </message>
    <message>
        <source>A machine could not join: %1.</source>
        <translation>有一台机器无法加入：%1。</translation>
    </message>
    <message>
        <source>The run stopped with an error: %1</source>
        <translation>训练因错误而停止：%1</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>正在检查模型和数据集…</translation>
    </message>
    <message>
        <source>No machine is chosen to train. Tick at least one machine under New run → Machines.</source>
        <translation>没有选择任何用于训练的机器。请在“新建训练 → 机器”中至少勾选一台。</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在开始…</translation>
    </message>
    <message numerus="yes">
        <source>Starting; inviting %n machine(s)…</source>
        <translation>
            <numerusform>正在开始；正在邀请 %n 台机器…</numerusform>
        </translation>
    </message>
    <message>
        <source>Run folder: %1</source>
        <translation>训练文件夹：%1</translation>
    </message>
    <message>
        <source>That run finished or has no checkpoint; start a new run instead.</source>
        <translation>该训练已完成或没有检查点；请新建一次训练。</translation>
    </message>
    <message>
        <source>Cannot resume: %1</source>
        <translation>无法继续：%1</translation>
    </message>
    <message>
        <source>Stopped at step %1; a checkpoint is saved.</source>
        <translation>已在第 %1 步停止；检查点已保存。</translation>
    </message>
    <message>
        <source>The run stopped at step %1. Resume it from History.</source>
        <translation>训练已在第 %1 步停止。可在“历史”中继续。</translation>
    </message>
    <message>
        <source>The run failed.</source>
        <translation>训练失败。</translation>
    </message>
    <message>
        <source>Choose a run in History first.</source>
        <translation>请先在“历史”中选择一次训练。</translation>
    </message>
    <message>
        <source>Export as TorchScript</source>
        <translation>导出为 TorchScript</translation>
    </message>
    <message>
        <source>Export as safetensors</source>
        <translation>导出为 safetensors</translation>
    </message>
    <message>
        <source>TorchScript (*.pt)</source>
        <translation>TorchScript (*.pt)</translation>
    </message>
    <message>
        <source>safetensors (*.safetensors)</source>
        <translation>safetensors (*.safetensors)</translation>
    </message>
    <message>
        <source>That run has no checkpoint to export.</source>
        <translation>该训练没有可导出的检查点。</translation>
    </message>
    <message>
        <source>Exported to %1. In Python: %2</source>
        <translation>已导出到 %1。在 Python 中：%2</translation>
    </message>
    <message>
        <source>The export failed: %1</source>
        <translation>导出失败：%1</translation>
    </message>
    <message>
        <source>Pair with %1?</source>
        <translation>与 %1 配对？</translation>
    </message>
    <message>
        <source>%1 (%2) wants to pair with this machine.

Does it show this code?

%3 %4</source>
        <translation>%1（%2）想与本机配对。

它显示的是这个配对码吗？

%3 %4</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>配对码一致</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>配对码不同</translation>
    </message>
    <message>
        <source>Save run description</source>
        <translation>保存训练描述</translation>
    </message>
    <message>
        <source>Run description (*.json)</source>
        <translation>训练描述 (*.json)</translation>
    </message>
    <message>
        <source>Saved the run description to %1; train it with: tandem train --config %1</source>
        <translation>训练描述已保存到 %1；用以下命令训练：tandem train --config %1</translation>
    </message>
    <message>
        <source>Load run description</source>
        <translation>载入训练描述</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练中</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>Stopping</source>
        <translation>正在停止</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Quit Tandem</source>
        <translation>退出 Tandem</translation>
    </message>
    <message>
        <source>A run is in progress. Stop it (a checkpoint is saved, so it can be resumed) and quit?</source>
        <translation>训练正在进行。停止它（会保存检查点，之后可继续）并退出？</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop and quit</source>
        <translation>停止并退出</translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation>超参数搜索</translation>
    </message>
    <message>
        <source>TorchScript (*.pt);;safetensors (*.safetensors)</source>
        <translation>TorchScript (*.pt);;safetensors (*.safetensors)</translation>
    </message>
    <message>
        <source>Try it…</source>
        <translation>试一试…</translation>
    </message>
    <message>
        <source>Let a language model continue a prompt of yours.</source>
        <translation>让语言模型续写您给出的文本。</translation>
    </message>
    <message>
        <source>Epoch %1: %2, test loss %3</source>
        <translation>第 %1 轮：%2，测试损失 %3</translation>
    </message>
    <message>
        <source>The run finished: %1. Export the model from History.</source>
        <translation>运行已完成：%1。请在“历史”中导出模型。</translation>
    </message>
    <message>
        <source>Pausing after the step in progress…</source>
        <translation>当前步骤完成后暂停…</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 done · evaluating on %3 test samples… %4 %</source>
        <translation>第 %1 / %2 轮完成 · 正在用 %3 个测试样本评估… %4 %</translation>
    </message>
    <message>
        <source>device %1</source>
        <translation>设备 %1</translation>
    </message>
    <message>
        <source>Device ID: %1
Address: %2</source>
        <translation>设备 ID：%1
地址：%2</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Stop lending</source>
        <translation>停止出借</translation>
    </message>
    <message>
        <source>End this machine&apos;s part in the other machine&apos;s run; the run goes on without it.</source>
        <translation>结束本机在另一台机器训练中的工作；训练会在没有本机的情况下继续。</translation>
    </message>
    <message>
        <source>This machine is %1 (device %2), listening on port %3</source>
        <translation>本机是 %1（设备 %2），正在监听端口 %3</translation>
    </message>
    <message>
        <source>Training for %1</source>
        <translation>正在为 %1 训练</translation>
    </message>
    <message>
        <source>This machine finished its work for %1. The charts show its part of that run.</source>
        <translation>本机已完成为 %1 的工作。图表显示本机在该训练中的部分。</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1</source>
        <translation>本机正出借给 %1 的训练</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1 (device %2)</source>
        <translation>本机正出借给 %1（设备 %2）的训练</translation>
    </message>
    <message>
        <source>%1: receiving the model and the data…</source>
        <translation>%1：正在接收模型和数据…</translation>
    </message>
    <message>
        <source>%1: %2 paused the run; this machine waits.</source>
        <translation>%1：%2 暂停了训练；本机正在等待。</translation>
    </message>
    <message>
        <source>%1 on %2: waiting for the first step…</source>
        <translation>%1，使用 %2：正在等待第一步…</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <source>this machine&apos;s share %1 %</source>
        <translation>本机份额 %1 %</translation>
    </message>
    <message>
        <source>loss %1</source>
        <translation>损失 %1</translation>
    </message>
    <message>
        <source>%1 on %2</source>
        <translation>%1，使用 %2</translation>
    </message>
    <message>
        <source>This machine is lending its device to another run: press Stop lending first.</source>
        <translation>本机正将设备出借给另一个训练：请先按“停止出借”。</translation>
    </message>
    <message>
        <source>Mode: %1</source>
        <translation>模式：%1</translation>
    </message>
    <message>
        <source>The model cannot be used: %1.</source>
        <translation>无法使用该模型：%1。</translation>
    </message>
    <message>
        <source>Export the Hugging Face folder as</source>
        <translation>将 Hugging Face 文件夹导出为</translation>
    </message>
    <message>
        <source>Export the adapters as</source>
        <translation>将适配器导出为</translation>
    </message>
    <message>
        <source>Resuming…</source>
        <translation>正在继续…</translation>
    </message>
    <message>
        <source>Ready: press Start to train with these settings.</source>
        <translation>就绪：按“开始”以这些设置训练。</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 · step %3 of %4 · elapsed %5 · about %6 left · %7 · loss %8</source>
        <translation>第 %1/%2 轮 · 第 %3/%4 步 · 已用 %5 · 约剩 %6 · %7 · 损失 %8</translation>
    </message>
    <message>
        <source>Finished: %1, %2.</source>
        <translation>已完成：%1，%2。</translation>
    </message>
    <message>
        <source>This machine lent its device to that run; its model is on the machine that ran it.</source>
        <translation>本机只是把设备借给了该运行；模型在运行它的那台机器上。</translation>
    </message>
    <message>
        <source>New run like this</source>
        <translation>照此新建训练</translation>
    </message>
    <message>
        <source>Puts this run&apos;s settings in the New run form.</source>
        <translation>把这次训练的设置填入“新建训练”表单。</translation>
    </message>
    <message>
        <source>Folder: %1</source>
        <translation>文件夹：%1</translation>
    </message>
    <message>
        <source>No file manager opened the folder. The run&apos;s files are in %1</source>
        <translation>没有文件管理器打开该文件夹。这次训练的文件在 %1</translation>
    </message>
    <message>
        <source>Not started.</source>
        <translation>未开始。</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. The user guide lists the model families Tandem reads.</source>
        <translation>无法使用该模型：%1。用户指南列出了 Tandem 能读取的模型系列。</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, hardly smaller here: this model&apos;s rows are not whole blocks of 256 values, which 4 bits need, so they are stored at 5 to 8 bits</source>
        <translation>Q4_K_M：约 %1，在这里几乎不会更小：该模型的行不是 4 位所需的 256 个值的整块，因此以 5 到 8 位存储</translation>
    </message>
    <message>
        <source>That run&apos;s record has no settings to start from: %1</source>
        <translation>这次训练的记录中没有可用作起点的设置：%1</translation>
    </message>
    <message>
        <source>This machine finished its work for %1 before its first step.</source>
        <translation>本机在第一步之前就结束了为 %1 的工作。</translation>
    </message>
    <message>
        <source>%1 stopped lending itself to this run. Its share goes to the others.</source>
        <translation>%1 已停止为这次训练出借自己。它的份额交给其他机器。</translation>
    </message>
    <message>
        <source>Notes…</source>
        <translation>备注…</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <source>Choose two or more runs (Ctrl+click) to see their curves and settings side by side.</source>
        <translation>选择两次或更多训练（Ctrl+单击），并排查看它们的曲线和设置。</translation>
    </message>
    <message>
        <source>Notes on %1</source>
        <translation>关于 %1 的备注</translation>
    </message>
    <message>
        <source>What to remember of this run (shown in History and when comparing runs):</source>
        <translation>关于这次训练要记住的内容（显示在“历史”中以及比较训练时）：</translation>
    </message>
    <message>
        <source>%1 unpaired this machine. To train together again, pair the two (Machines → Set up pairing).</source>
        <translation>%1 已解除与本机的配对。要再次一起训练，请重新配对这两台机器（机器 → 设置配对）。</translation>
    </message>
    <message>
        <source>Exported to %1.</source>
        <translation>已导出到 %1。</translation>
    </message>
    <message>
        <source>Ollama is not installed on this machine; where it is: %1. LM Studio and llama.cpp open the file as it is.</source>
        <translation>本机未安装 Ollama；在已安装的机器上：%1。LM Studio 和 llama.cpp 可直接打开该文件。</translation>
    </message>
    <message>
        <source>Added to Ollama as %1: ollama run %1</source>
        <translation>已以 %1 添加到 Ollama：ollama run %1</translation>
    </message>
    <message>
        <source>Ollama could not add it (%1). By hand: %2</source>
        <translation>Ollama 无法添加它（%1）。手动方式：%2</translation>
    </message>
    <message>
        <source>Adding it to Ollama as %1…</source>
        <translation>正在以 %1 添加到 Ollama…</translation>
    </message>
</context>
<context>
    <name>tandem::ui::PeerModel</name>
    <message>
        <source>Machine</source>
        <translation>机器</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>角色</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>样本/秒</translation>
    </message>
    <message>
        <source>Device ID %1
%2
Tandem %3</source>
        <translation>设备 ID %1
%2
Tandem %3</translation>
    </message>
    <message>
        <source>%1 (this machine)</source>
        <translation>%1（本机）</translation>
    </message>
    <message>
        <source>Online</source>
        <translation>在线</translation>
    </message>
    <message>
        <source>Offline</source>
        <translation>离线</translation>
    </message>
    <message>
        <source>Online, paired</source>
        <translation>在线，已配对</translation>
    </message>
    <message>
        <source>Online, not paired</source>
        <translation>在线，未配对</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Coordinator</source>
        <translation>协调者</translation>
    </message>
    <message>
        <source>Coordinator and worker</source>
        <translation>协调者兼工作节点</translation>
    </message>
    <message>
        <source>Idle: would slow the run (%1 ms a step before its first sample, against a %2 ms step)</source>
        <translation>空闲：会拖慢训练（每步在第一个样本之前需要 %1 毫秒，而没有它时每步 %2 毫秒）</translation>
    </message>
    <message>
        <source>Idle: slowed the run (its steps took %1 ms, against %2 ms without it)</source>
        <translation>空闲：拖慢了训练（有它时每步 %1 毫秒，没有它时每步 %2 毫秒）</translation>
    </message>
    <message>
        <source>The run measures it again after a few dozen steps, then less often while it would still slow the run, and gives it a share again when it would make steps shorter: when its load lifts, its link gets faster, or the batch grows.</source>
        <translation>训练会在几十步后重新测量它，之后只要它仍会拖慢训练，就测量得更少；当它能缩短每一步时（例如负载降低、连接变快或批大小增大），会再次分配给它一份。</translation>
    </message>
    <message>
        <source>Worker</source>
        <translation>工作节点</translation>
    </message>
    <message>
        <source>Online, but its Tandem %1 cannot work with this one: install the same version on both</source>
        <translation>在线，但它的 Tandem %1 无法与本机协同工作：请在两台机器上安装相同版本</translation>
    </message>
    <message>
        <source>Device ID</source>
        <translation>设备 ID</translation>
    </message>
    <message>
        <source>This machine&apos;s part of each step&apos;s samples, as the run assigns them: the machine that lends its device shows the same figure</source>
        <translation>本机在每一步样本中所占的份额，按运行的分配计算：借出设备的机器显示同一数字</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>份额</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>词元/秒</translation>
    </message>
    <message>
        <source>In a sharded run: which range of the trainable values this machine owns, what it keeps for it (the fp32 weights, the optimizer&apos;s state and the gradients&apos; sum), and the bytes its links sent and received in the last step</source>
        <translation>分片训练（--shard）中：这台机器拥有的可训练值的范围、它为此保存的内容（fp32 权重、优化器状态和梯度之和），以及它的连接在上一步发送和接收的字节数</translation>
    </message>
    <message>
        <source>Shard</source>
        <translation>分片</translation>
    </message>
    <message>
        <source>%1 of %2, %3, %4 a step</source>
        <translation>第 %1 片，共 %2 片，%3，每步 %4</translation>
    </message>
    <message>
        <source>%1 of %2, %3</source>
        <translation>第 %1 片，共 %2 片，%3</translation>
    </message>
</context>
<context>
    <name>tandem::ui::RunForm</name>
    <message>
        <source>Text file (bytes, or a Hugging Face model&apos;s tokenizer)</source>
        <translation>文本文件（字节，或 Hugging Face 模型的分词器）</translation>
    </message>
    <message>
        <source>JSON Lines of documents (&quot;text&quot; a line; a Hugging Face model)</source>
        <translation>JSON Lines 文档（每行一个 &quot;text&quot;；Hugging Face 模型）</translation>
    </message>
    <message>
        <source>Chat conversations (JSON Lines of &quot;messages&quot;; a Hugging Face model)</source>
        <translation>对话（&quot;messages&quot; 的 JSON Lines；Hugging Face 模型）</translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl *.json);;All files (*)</source>
        <translation>JSON Lines (*.jsonl *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>A Hugging Face folder… (%1)</source>
        <translation>Hugging Face 模型文件夹…（%1）</translation>
    </message>
    <message>
        <source>empty: train every weight</source>
        <translation>留空：训练全部权重</translation>
    </message>
    <message>
        <source>Low-rank adapters: only they train, the model&apos;s own weights stay frozen. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</source>
        <translation>低秩适配器：只训练适配器，模型自身的权重保持冻结。r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</translation>
    </message>
    <message>
        <source>Recompute activations (less memory, more time)</source>
        <translation>重新计算激活（占用更少内存，耗时更长）</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>适配器（LoRA）</translation>
    </message>
    <message>
        <source>a folder with config.json and model.safetensors</source>
        <translation>包含 config.json 和 model.safetensors 的文件夹</translation>
    </message>
    <message>
        <source>Choose a Hugging Face model folder</source>
        <translation>选择 Hugging Face 模型文件夹</translation>
    </message>
    <message>
        <source>Choose the Hugging Face model&apos;s folder.</source>
        <translation>请选择 Hugging Face 模型的文件夹。</translation>
    </message>
    <message>
        <source>mnist-cnn: convolutional network for 28×28 images</source>
        <translation>mnist-cnn：用于 28×28 图像的卷积网络</translation>
    </message>
    <message>
        <source>mlp: small fully connected network</source>
        <translation>mlp：小型全连接网络</translation>
    </message>
    <message>
        <source>resnet8: small ResNet for 32×32 colour images</source>
        <translation>resnet8：用于 32×32 彩色图像的小型 ResNet</translation>
    </message>
    <message>
        <source>Your TorchScript file…</source>
        <translation>您的 TorchScript 文件…</translation>
    </message>
    <message>
        <source>model.pt saved with torch.jit.save</source>
        <translation>用 torch.jit.save 保存的 model.pt</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Fashion-MNIST (built in)</source>
        <translation>Fashion-MNIST（内置）</translation>
    </message>
    <message>
        <source>Fashion-MNIST folder (IDX files)</source>
        <translation>Fashion-MNIST 文件夹（IDX 文件）</translation>
    </message>
    <message>
        <source>MNIST folder (IDX files)</source>
        <translation>MNIST 文件夹（IDX 文件）</translation>
    </message>
    <message>
        <source>CIFAR-10 folder (binary version)</source>
        <translation>CIFAR-10 文件夹（二进制版本）</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>机器</translation>
    </message>
    <message>
        <source>Synchronous: one model, exact (best on a fast network)</source>
        <translation>同步：单一模型，精确（适合快速网络）</translation>
    </message>
    <message>
        <source>Asynchronous: no waiting for the slowest machine</source>
        <translation>异步：不等待最慢的机器</translation>
    </message>
    <message>
        <source>Local SGD: several local steps per exchange (slow networks)</source>
        <translation>本地 SGD：每次交换前执行多个本地步（适合慢速网络）</translation>
    </message>
    <message>
        <source>Automatic: measures the network, then synchronous or streaming</source>
        <translation>自动：先测量网络，再选择同步或流式</translation>
    </message>
    <message>
        <source>Streaming local SGD: exchanges overlap training (Wi-Fi)</source>
        <translation>流式本地 SGD：交换与训练重叠进行（Wi-Fi）</translation>
    </message>
    <message>
        <source>8-bit blocks (a quarter of the traffic)</source>
        <translation>8 位分块（四分之一的流量）</translation>
    </message>
    <message>
        <source>4-bit blocks (an eighth of the traffic)</source>
        <translation>4 位分块（八分之一的流量）</translation>
    </message>
    <message>
        <source>Local SGD updates</source>
        <translation>本地 SGD 更新</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>32-bit floats (exact)</source>
        <translation>32 位浮点（精确）</translation>
    </message>
    <message>
        <source>16-bit floats (half the traffic)</source>
        <translation>16 位浮点（流量减半）</translation>
    </message>
    <message>
        <source>bfloat16 (half the traffic, wider range)</source>
        <translation>bfloat16（流量减半，范围更大）</translation>
    </message>
    <message>
        <source>Wire precision</source>
        <translation>传输精度</translation>
    </message>
    <message>
        <source>Device on this machine</source>
        <translation>本机设备</translation>
    </message>
    <message>
        <source>Best available: %1</source>
        <translation>最佳可用：%1</translation>
    </message>
    <message>
        <source>Compute precision</source>
        <translation>计算精度</translation>
    </message>
    <message>
        <source>bfloat16 autocast (faster on recent CPUs and GPUs)</source>
        <translation>bfloat16 自动混合精度（在较新的 CPU 和 GPU 上更快）</translation>
    </message>
    <message>
        <source>16-bit autocast (NVIDIA and Apple GPUs)</source>
        <translation>16 位自动混合精度（NVIDIA 和 Apple GPU）</translation>
    </message>
    <message>
        <source>SGD with momentum</source>
        <translation>带动量的 SGD</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>constant</source>
        <translation>恒定</translation>
    </message>
    <message>
        <source>cosine decay</source>
        <translation>余弦衰减</translation>
    </message>
    <message>
        <source>warm-up steps: </source>
        <translation>预热步数：</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>轮数</translation>
    </message>
    <message>
        <source>Batch (all machines)</source>
        <translation>批大小（所有机器合计）</translation>
    </message>
    <message>
        <source>a folder</source>
        <translation>一个文件夹</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <source>%1 is not a run description: %2</source>
        <translation>%1 不是训练描述：%2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Choose a TorchScript model</source>
        <translation>选择 TorchScript 模型</translation>
    </message>
    <message>
        <source>TorchScript (*.pt *.pth);;All files (*)</source>
        <translation>TorchScript (*.pt *.pth);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Choose the dataset folder</source>
        <translation>选择数据集文件夹</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>正在检查模型和数据集…</translation>
    </message>
    <message>
        <source>Choose a TorchScript file for the model.</source>
        <translation>请为模型选择一个 TorchScript 文件。</translation>
    </message>
    <message>
        <source>Choose where the dataset is.</source>
        <translation>请选择数据集所在位置。</translation>
    </message>
    <message>
        <source>Check model and data</source>
        <translation>检查模型和数据</translation>
    </message>
    <message>
        <source>gpt: small language model over the bytes of a text</source>
        <translation>gpt：基于文本字节的小型语言模型</translation>
    </message>
    <message>
        <source>CSV file (label= or target= column and numbers)</source>
        <translation>CSV 文件（label= 或 target= 列与数值）</translation>
    </message>
    <message>
        <source>Token file (nanoGPT .bin)</source>
        <translation>词元文件（nanoGPT .bin）</translation>
    </message>
    <message>
        <source>NumPy arrays (.npz with x_train, y_train)</source>
        <translation>NumPy 数组（含 x_train、y_train 的 .npz）</translation>
    </message>
    <message>
        <source>Image folder (one subfolder per class)</source>
        <translation>图像文件夹（每个类别一个子文件夹）</translation>
    </message>
    <message>
        <source>Automatic: from the model&apos;s output and the data</source>
        <translation>自动：根据模型输出与数据选择</translation>
    </message>
    <message>
        <source>Cross-entropy (classes, next token)</source>
        <translation>交叉熵（类别、下一个词元）</translation>
    </message>
    <message>
        <source>Mean squared error (regression)</source>
        <translation>均方误差（回归）</translation>
    </message>
    <message>
        <source>Mean absolute error (regression)</source>
        <translation>平均绝对误差（回归）</translation>
    </message>
    <message>
        <source>Huber (regression with outliers)</source>
        <translation>Huber（含离群值的回归）</translation>
    </message>
    <message>
        <source>Binary cross-entropy (several labels each)</source>
        <translation>二元交叉熵（每个样本多个标签）</translation>
    </message>
    <message>
        <source>The model&apos;s own loss() method</source>
        <translation>模型自带的 loss() 方法</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>a .csv file[,target=COLUMN to predict a number]</source>
        <translation>一个 .csv 文件[,target=列 以预测数值]</translation>
    </message>
    <message>
        <source>a text file[,context=256]</source>
        <translation>一个文本文件[,context=256]</translation>
    </message>
    <message>
        <source>a .bin file[,dtype=uint16][,context=256]</source>
        <translation>一个 .bin 文件[,dtype=uint16][,context=256]</translation>
    </message>
    <message>
        <source>a folder of class folders[,size=64]</source>
        <translation>一个包含类别文件夹的文件夹[,size=64]</translation>
    </message>
    <message>
        <source>a file</source>
        <translation>一个文件</translation>
    </message>
    <message>
        <source>Choose the dataset file</source>
        <translation>选择数据集文件</translation>
    </message>
    <message>
        <source>CSV (*.csv);;All files (*)</source>
        <translation>CSV (*.csv);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Text (*.txt *.md);;All files (*)</source>
        <translation>文本 (*.txt *.md);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Token files (*.bin);;All files (*)</source>
        <translation>词元文件 (*.bin);;所有文件 (*)</translation>
    </message>
    <message>
        <source>NumPy (*.npz);;All files (*)</source>
        <translation>NumPy (*.npz);;所有文件 (*)</translation>
    </message>
    <message>
        <source>all of them</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Train on the first N training samples only; 0 uses them all.</source>
        <translation>只用前 N 个训练样本训练；0 表示全部使用。</translation>
    </message>
    <message>
        <source>Training samples</source>
        <translation>训练样本</translation>
    </message>
    <message>
        <source>Base as stored</source>
        <translation>基础权重保持原样</translation>
    </message>
    <message>
        <source>Base in 8 bits</source>
        <translation>基础权重用 8 位</translation>
    </message>
    <message>
        <source>Base in 4 bits (QLoRA)</source>
        <translation>基础权重用 4 位（QLoRA）</translation>
    </message>
    <message>
        <source>The frozen model&apos;s own weights in 4 bits (nf4) take about a quarter of bf16&apos;s memory: a 7-8B model fits a 12 GB card</source>
        <translation>冻结的模型权重用 4 位（nf4）存放，约占 bf16 内存的四分之一：7–8B 的模型可放进 12 GB 显卡</translation>
    </message>
    <message>
        <source>No</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Q4_K_M: smallest, about 4.9 bits a weight</source>
        <translation>Q4_K_M：最小，每个权重约 4.9 位</translation>
    </message>
    <message>
        <source>Q8_0: 8.5 bits a weight, close to the original</source>
        <translation>Q8_0：每个权重 8.5 位，接近原模型</translation>
    </message>
    <message>
        <source>F16: 16 bits, as trained</source>
        <translation>F16：16 位，与训练时相同</translation>
    </message>
    <message>
        <source>BF16: 16 bits, as trained</source>
        <translation>BF16：16 位，与训练时相同</translation>
    </message>
    <message>
        <source>At the end of the run, also write model.gguf and model.Modelfile in the run&apos;s folder: `ollama create NAME -f model.Modelfile` adds it to Ollama, and LM Studio and llama.cpp open model.gguf as it is</source>
        <translation>运行结束时，另在运行文件夹中写入 model.gguf 和 model.Modelfile：`ollama create NAME -f model.Modelfile` 将其加入 Ollama，LM Studio 和 llama.cpp 可直接打开 model.gguf</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>导出到 Ollama / llama.cpp</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个词元</translation>
    </message>
    <message>
        <source>How many tokens the model sees at once: each training window holds this many, and predicts each next one.</source>
        <translation>模型一次看到的词元数：每个训练窗口包含这么多词元，并逐个预测下一个。</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>= %1 tokens a step</source>
        <translation>= 每步 %1 个词元</translation>
    </message>
    <message>
        <source>Batch set to %1 for this data; set it yourself to keep another.</source>
        <translation>已按这些数据将批大小设为 %1；如需其他值，请自行设置。</translation>
    </message>
    <message>
        <source>Preference pairs (JSON Lines of &quot;prompt&quot;, &quot;chosen&quot; and &quot;rejected&quot;; a Hugging Face model)</source>
        <translation>偏好对（&quot;prompt&quot;、&quot;chosen&quot; 和 &quot;rejected&quot; 的 JSON Lines；Hugging Face 模型）</translation>
    </message>
    <message>
        <source>DPO (preference pairs; LoRA adapters, whose base is the reference)</source>
        <translation>DPO（偏好对；LoRA 适配器，其基座即参考模型）</translation>
    </message>
    <message>
        <source>ORPO (preference pairs; no reference model)</source>
        <translation>ORPO（偏好对；无需参考模型）</translation>
    </message>
    <message>
        <source>DPO&apos;s β: how far the model may move from the reference. ORPO&apos;s λ: the weight of the preference term beside the chosen answer&apos;s loss.</source>
        <translation>DPO 的 β：模型可偏离参考模型的程度。ORPO 的 λ：偏好项相对于所选回答损失的权重。</translation>
    </message>
    <message>
        <source>Preference strength (β, λ)</source>
        <translation>偏好强度（β、λ）</translation>
    </message>
    <message>
        <source>The layers that get adapters. Checked at first: those the model&apos;s family adapts by default.</source>
        <translation>获得适配器的层。初始勾选的是该模型系列默认适配的层。</translation>
    </message>
    <message>
        <source>Adapted layers</source>
        <translation>适配的层</translation>
    </message>
    <message>
        <source>Preview…</source>
        <translation>预览…</translation>
    </message>
    <message>
        <source>The first conversations as the model will read them, the tokens that train, the lengths against the context, and any line that cannot be read.</source>
        <translation>模型将读到的前几段对话、参与训练的词元、相对于上下文的长度，以及无法读取的行。</translation>
    </message>
    <message>
        <source>From the Hub…</source>
        <translation>从 Hub 获取…</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub and download a model, or choose one already downloaded</source>
        <translation>在 Hugging Face Hub 中搜索并下载模型，或选择已下载的模型</translation>
    </message>
    <message>
        <source>optional: how History will name this run</source>
        <translation>可选：历史记录中此次训练的名称</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Split the weights and the optimizer across the machines</source>
        <translation>将权重和优化器拆分到各台机器上</translation>
    </message>
    <message>
        <source>Each machine keeps one range of the fp32 weights, of the optimizer&apos;s state and of the gradients&apos; sum, and steps it itself: a full fine-tune can then need more memory than any one machine has. For synchronous and local SGD runs that train every weight, on more than one machine.</source>
        <translation>每台机器保存 fp32 权重、优化器状态和梯度之和中的一段，并自行完成这一段的更新：这样，完整微调所需的内存可以超过任何一台机器的内存。适用于训练全部权重的同步训练或本地 SGD 训练，且使用不止一台机器。</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SettingsDialog</name>
    <message>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <source>Choose a folder</source>
        <translation>选择文件夹</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>系统语言</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>this computer&apos;s host name</source>
        <translation>本计算机的主机名</translation>
    </message>
    <message>
        <source>Machine name</source>
        <translation>机器名称</translation>
    </message>
    <message>
        <source>Discovery port (UDP)</source>
        <translation>发现端口（UDP）</translation>
    </message>
    <message>
        <source>Pairing port (TCP)</source>
        <translation>配对端口（TCP）</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>任意空闲端口</translation>
    </message>
    <message>
        <source>Training port (TCP)</source>
        <translation>训练端口（TCP）</translation>
    </message>
    <message>
        <source>Runs folder</source>
        <translation>训练文件夹</translation>
    </message>
    <message>
        <source>Dataset cache</source>
        <translation>数据集缓存</translation>
    </message>
    <message>
        <source>none: base models are received</source>
        <translation>无：基础模型将被接收</translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation>模型文件夹</translation>
    </message>
    <message>
        <source>Train for paired machines while this one is idle</source>
        <translation>本机空闲时为已配对的机器训练</translation>
    </message>
    <message>
        <source>A new language or new ports take effect when Tandem starts again.</source>
        <translation>新的语言或端口将在 Tandem 下次启动时生效。</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SetupWizard</name>
    <message>
        <source>This machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>Tandem trains on every device listed here. Other machines will see this machine under its name.</source>
        <translation>Tandem 会在这里列出的每个设备上训练。其他机器将以此名称看到本机。</translation>
    </message>
    <message>
        <source>Devices:</source>
        <translation>设备：</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <source>Device ID: %1</source>
        <translation>设备 ID：%1</translation>
    </message>
    <message>
        <source>Find your other machine</source>
        <translation>找到您的另一台机器</translation>
    </message>
    <message>
        <source>Start Tandem on the other machine too. Machines on this network appear below; choose one and press Next.</source>
        <translation>也请在另一台机器上启动 Tandem。此网络中的机器会显示在下方；选择一台并点击“下一步”。</translation>
    </message>
    <message>
        <source>IP address or host name</source>
        <translation>IP 地址或主机名</translation>
    </message>
    <message>
        <source>Add by address</source>
        <translation>按地址添加</translation>
    </message>
    <message>
        <source>Nothing yet? Check that Tandem runs on the other machine and that both are on the same network. Firewalls must allow UDP port 47300 and TCP port 47301. On a Mac, allow Tandem under System Settings → Privacy &amp; Security → Local Network. Some Wi-Fi networks block discovery: then add the other machine by its address.</source>
        <translation>还没有？请确认另一台机器上正在运行 Tandem，且两台机器在同一网络中。防火墙必须放行 UDP 端口 47300 和 TCP 端口 47301。在 Mac 上，请在“系统设置 → 隐私与安全性 → 本地网络”中允许 Tandem。有些 Wi-Fi 网络会阻止发现：此时请按地址添加另一台机器。</translation>
    </message>
    <message>
        <source>To train on this machine alone, press Next without choosing a machine.</source>
        <translation>若只想在本机上训练，请不选择机器直接点击“下一步”。</translation>
    </message>
    <message>
        <source>Pair</source>
        <translation>配对</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>配对码一致</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>配对码不同</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Check that %1 shows the same code:</source>
        <translation>请确认 %1 显示相同的配对码：</translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>正在连接 %1…</translation>
    </message>
    <message>
        <source>Waiting for the other machine to confirm…</source>
        <translation>正在等待另一台机器确认…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Paired with %1.</source>
        <translation>已与 %1 配对。</translation>
    </message>
    <message>
        <source>Press Next.</source>
        <translation>请点击“下一步”。</translation>
    </message>
    <message>
        <source>Nobody answered in time.</source>
        <translation>没有人及时回应。</translation>
    </message>
    <message>
        <source>Press Try again, and confirm the code on both machines within a minute.</source>
        <translation>请点击“重试”，并在一分钟内在两台机器上确认配对码。</translation>
    </message>
    <message>
        <source>You said the codes differ. Nothing was paired.</source>
        <translation>您表示配对码不同。未进行配对。</translation>
    </message>
    <message>
        <source>The other machine said the codes differ. Nothing was paired.</source>
        <translation>另一台机器表示配对码不同。未进行配对。</translation>
    </message>
    <message>
        <source>Codes that differ can mean that another device is answering in place of your machine. Check that you chose the right machine, then try again.</source>
        <translation>配对码不同可能意味着有其他设备冒充您的机器应答。请确认选择了正确的机器，然后重试。</translation>
    </message>
    <message>
        <source>The other machine refused.</source>
        <translation>另一台机器拒绝了请求。</translation>
    </message>
    <message>
        <source>It may be busy or have refused several attempts: wait a minute and try again.</source>
        <translation>它可能正忙，或已拒绝多次尝试：请等待一分钟后重试。</translation>
    </message>
    <message>
        <source>Could not reach the other machine.</source>
        <translation>无法连接到另一台机器。</translation>
    </message>
    <message>
        <source>Check that Tandem is running there and that its firewall allows TCP port 47301.</source>
        <translation>请确认那台机器上正在运行 Tandem，且其防火墙放行 TCP 端口 47301。</translation>
    </message>
    <message>
        <source>Pairing failed.</source>
        <translation>配对失败。</translation>
    </message>
    <message>
        <source>Try again. If this repeats, see Troubleshooting in the user guide.</source>
        <translation>请重试。如果再次出现，请参阅用户指南中的“故障排除”。</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>%1 and %2 are paired. They find each other on this network from now on; Tandem shares the training between them.</source>
        <translation>%1 和 %2 已配对。此后它们会在此网络中自动找到对方；Tandem 会在它们之间分配训练。</translation>
    </message>
    <message>
        <source>%1 is ready to train on its own. You can pair another machine at any time from Machines → Set up pairing.</source>
        <translation>%1 已准备好单独训练。您随时可以通过“机器 → 设置配对”配对另一台机器。</translation>
    </message>
    <message>
        <source>Press Finish to open the dashboard. Its New run tab is set up for the demo (mnist-cnn on Fashion-MNIST): press Start.</source>
        <translation>点击“完成”打开仪表板。其“新建训练”页已为演示设置好（在 Fashion-MNIST 上训练 mnist-cnn）：点击“开始”。</translation>
    </message>
    <message>
        <source>Set up Tandem</source>
        <translation>设置 Tandem</translation>
    </message>
    <message>
        <source>Finish</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>&lt; &amp;Back</source>
        <translation>&lt; 上一步(&amp;B)</translation>
    </message>
    <message>
        <source>&amp;Next &gt;</source>
        <translation>下一步(&amp;N) &gt;</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Both machines show a code. When the codes are the same, no other device sits between the two.</source>
        <translation>两台机器都会显示一个代码。代码相同时，说明两者之间没有其他设备。</translation>
    </message>
    <message>
        <source>What was set up, and what comes next.</source>
        <translation>已设置的内容，以及接下来要做的事。</translation>
    </message>
    <message>
        <source>%1 and %2 are paired: %2 asked, and you confirmed the code here.</source>
        <translation>%1 与 %2 已配对：%2 发起了请求，您在此确认了代码。</translation>
    </message>
    <message>
        <source>Runs started on %1 can now use this machine&apos;s devices. Keep Tandem open here: the dashboard shows the run while this machine takes part, with Stop lending to leave it. You can also start runs from here.</source>
        <translation>在 %1 上启动的训练现在可以使用本机的设备。请在此保持 Tandem 打开：本机参与期间，仪表板会显示该训练，按“停止出借”即可退出。您也可以从这里启动训练。</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SweepTab</name>
    <message>
        <source>A sweep description (JSON): a run with a &quot;sweep&quot; object</source>
        <translation>超参数搜索描述（JSON）：带有 &quot;sweep&quot; 对象的训练描述</translation>
    </message>
    <message>
        <source>Open…</source>
        <translation>打开…</translation>
    </message>
    <message>
        <source>Where the trials&apos; run folders and sweep.jsonl go</source>
        <translation>各试验的训练文件夹和 sweep.jsonl 的保存位置</translation>
    </message>
    <message>
        <source>Paired machines run trials too</source>
        <translation>已配对的机器也运行试验</translation>
    </message>
    <message>
        <source>Start sweep</source>
        <translation>开始搜索</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Continue the sweep in this folder: finished trials are kept, interrupted ones resume from their checkpoints</source>
        <translation>继续此文件夹中的搜索：已完成的试验保留，中断的试验从其检查点继续</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Export best…</source>
        <translation>导出最佳…</translation>
    </message>
    <message>
        <source>Open a sweep file to start.</source>
        <translation>打开一个搜索文件以开始。</translation>
    </message>
    <message>
        <source>Trial</source>
        <translation>试验</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Sweep file</source>
        <translation>搜索文件</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>Parameter</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Open a sweep description</source>
        <translation>打开搜索描述</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>This sweep file cannot be used: %1</source>
        <translation>无法使用此搜索文件：%1</translation>
    </message>
    <message numerus="yes">
        <source>%n trial(s), %1, searching %2. Results go to the folder above.</source>
        <translation>
            <numerusform>%n 个试验，%1，搜索 %2。结果保存在上方的文件夹中。</numerusform>
        </translation>
    </message>
    <message>
        <source>That folder already holds a sweep: press Continue to go on with it, or choose another folder.</source>
        <translation>该文件夹中已有一次搜索：点击“继续”接着进行，或选择其他文件夹。</translation>
    </message>
    <message>
        <source>Cannot continue: %1</source>
        <translation>无法继续：%1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>%n 轮</numerusform>
        </translation>
    </message>
    <message>
        <source>test loss</source>
        <translation>测试损失</translation>
    </message>
    <message>
        <source>test accuracy</source>
        <translation>测试准确率</translation>
    </message>
    <message>
        <source>Every trial</source>
        <translation>所有试验</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>The sweep did not start: %1</source>
        <translation>搜索未能开始：%1</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>waiting for promotion</source>
        <translation>等待晋级</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>stopped early</source>
        <translation>提前停止</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>trial %1</source>
        <translation>试验 %1</translation>
    </message>
    <message>
        <source>%1 (log10)</source>
        <translation>%1（log10）</translation>
    </message>
    <message>
        <source>%1 against %2</source>
        <translation>%1 随 %2 的变化</translation>
    </message>
    <message>
        <source>trials</source>
        <translation>试验</translation>
    </message>
    <message>
        <source>best</source>
        <translation>最佳</translation>
    </message>
    <message numerus="yes">
        <source>Finished: %n trial(s) in %1 s.</source>
        <translation>
            <numerusform>已完成：%n 个试验，用时 %1 秒。</numerusform>
        </translation>
    </message>
    <message>
        <source>Stopped; Continue resumes it from the checkpoints.</source>
        <translation>已停止；点击“继续”将从检查点恢复。</translation>
    </message>
    <message>
        <source>Best: trial %1 (%2), %3.</source>
        <translation>最佳：试验 %1（%2），%3。</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n trial(s) started; running: %2; devices: %3.</source>
        <translation>
            <numerusform>已开始 %1/%n 个试验；运行中：%2；设备：%3。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::TryDialog</name>
    <message>
        <source> tokens</source>
        <translation> 个词元</translation>
    </message>
    <message>
        <source>Only the likeliest tokens that together make up this much probability are drawn from.</source>
        <translation>只从累计概率达到此值的最可能词元中抽取。</translation>
    </message>
    <message>
        <source>Tuned</source>
        <translation>调优后</translation>
    </message>
    <message>
        <source>Reference: the model before tuning</source>
        <translation>参考：调优前的模型</translation>
    </message>
    <message>
        <source>Answer as in a chat</source>
        <translation>像聊天一样回答</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Try %1</source>
        <translation>试用 %1</translation>
    </message>
    <message>
        <source> bytes</source>
        <translation> 字节</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>长度</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Could not generate: %1</source>
        <translation>无法生成：%1</translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation>正在生成…</translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), %1 tokens/s</source>
        <translation>
            <numerusform>%n 个词元，%1 个词元/秒</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not generate.</source>
        <translation>无法生成。</translation>
    </message>
    <message>
        <source>Stopped: %1.</source>
        <translation>已停止：%1。</translation>
    </message>
    <message>
        <source>Done: %1.</source>
        <translation>完成：%1。</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>A message for the model, or text to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>给模型的消息，或要续写的文本。Enter 发送；Shift+Enter 换行。</translation>
    </message>
    <message>
        <source>Text for the model to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>要模型续写的文本。Enter 发送；Shift+Enter 换行。</translation>
    </message>
    <message>
        <source>Optional: how the model should answer</source>
        <translation>可选：模型应如何回答</translation>
    </message>
    <message>
        <source>Writes your messages with the model&apos;s chat template and shows the assistant&apos;s answers; off, the model continues your text.</source>
        <translation>用模型的聊天模板写入你的消息并显示助手的回答；关闭时，模型续写你的文本。</translation>
    </message>
    <message>
        <source>0 always takes the likeliest next token; higher values vary more.</source>
        <translation>0 总是选择最可能的下一个词元；数值越高变化越多。</translation>
    </message>
    <message>
        <source>System</source>
        <translation>系统</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>你：%1</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
</context>
</TS>
