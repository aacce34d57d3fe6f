<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="hi">
<context>
    <name>Format</name>
    <message>
        <source>GPU %1 (CUDA): %2, %3</source>
        <translation>GPU %1 (CUDA): %2, %3</translation>
    </message>
    <message>
        <source>Apple GPU (MPS): %1, %2 shared memory</source>
        <translation>Apple GPU (MPS): %1, %2 साझा मेमोरी</translation>
    </message>
    <message numerus="yes">
        <source>CPU: %1, %n core(s), %2 RAM</source>
        <translation>
            <numerusform>CPU: %1, %n कोर, %2 RAM</numerusform>
            <numerusform>CPU: %1, %n कोर, %2 RAM</numerusform>
        </translation>
    </message>
    <message>
        <source>unknown model</source>
        <translation>अज्ञात मॉडल</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>सटीकता (%)</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>पर्प्लेक्सिटी</translation>
    </message>
    <message>
        <source>R²</source>
        <translation>R²</translation>
    </message>
    <message>
        <source>Test loss</source>
        <translation>परीक्षण हानि</translation>
    </message>
    <message>
        <source>not measured yet</source>
        <translation>अभी मापा नहीं गया</translation>
    </message>
    <message>
        <source>Reward accuracy (%)</source>
        <translation>इनाम सटीकता (%)</translation>
    </message>
    <message>
        <source>held-out reward accuracy %1%</source>
        <translation>अलग रखे जोड़ों पर इनाम सटीकता %1%</translation>
    </message>
    <message>
        <source>test accuracy %1%</source>
        <translation>परीक्षण सटीकता %1%</translation>
    </message>
    <message>
        <source>perplexity %1</source>
        <translation>पर्प्लेक्सिटी %1</translation>
    </message>
    <message>
        <source>R² %1</source>
        <translation>R² %1</translation>
    </message>
    <message>
        <source>test loss %1</source>
        <translation>परीक्षण हानि %1</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 टोकन/से</translation>
    </message>
    <message>
        <source>%1 samples/s</source>
        <translation>%1 नमूने/से</translation>
    </message>
    <message>
        <source>perplexity %1, next-token accuracy %2%</source>
        <translation>परप्लेक्सिटी %1, अगले टोकन की सटीकता %2%</translation>
    </message>
</context>
<context>
    <name>tandem::ui::ChartPanel</name>
    <message>
        <source>this machine</source>
        <translation>यह मशीन</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>ट्रेनिंग लॉस</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>स्टेप</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>लॉस</translation>
    </message>
    <message>
        <source>Loss per step</source>
        <translation>हर स्टेप का लॉस</translation>
    </message>
    <message>
        <source>Smoothed</source>
        <translation>स्मूद किया हुआ</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>सटीकता</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>एपॉक</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>सटीकता (%)</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>टेस्ट</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>ट्रेनिंग</translation>
    </message>
    <message>
        <source>Throughput per worker</source>
        <translation>हर वर्कर का थ्रूपुट</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>सैंपल/सेकंड</translation>
    </message>
    <message>
        <source>Where each worker&apos;s time goes</source>
        <translation>हर वर्कर का समय कहाँ जाता है</translation>
    </message>
    <message>
        <source>Seconds</source>
        <translation>सेकंड</translation>
    </message>
    <message>
        <source>Compute</source>
        <translation>गणना</translation>
    </message>
    <message>
        <source>Communicate</source>
        <translation>संचार</translation>
    </message>
    <message>
        <source>Wait</source>
        <translation>प्रतीक्षा</translation>
    </message>
    <message>
        <source>Reward accuracy</source>
        <translation>इनाम सटीकता</translation>
    </message>
    <message>
        <source>Loss, reward margin</source>
        <translation>हानि, इनाम अंतर</translation>
    </message>
    <message>
        <source>Reward margin</source>
        <translation>इनाम अंतर</translation>
    </message>
    <message>
        <source>Held-out perplexity</source>
        <translation>अलग रखे डेटा पर पर्प्लेक्सिटी</translation>
    </message>
    <message>
        <source>Held-out R²</source>
        <translation>अलग रखे डेटा पर R²</translation>
    </message>
    <message>
        <source>Held-out loss</source>
        <translation>अलग रखे डेटा पर लॉस</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>टोकन/से</translation>
    </message>
</context>
<context>
    <name>tandem::ui::CompareDialog</name>
    <message numerus="yes">
        <source>Compare %n run(s)</source>
        <translation>
            <numerusform>%n रन की तुलना</numerusform>
            <numerusform>%n रनों की तुलना</numerusform>
        </translation>
    </message>
    <message>
        <source>Training loss (smoothed)</source>
        <translation>ट्रेनिंग लॉस (स्मूद किया हुआ)</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>स्टेप</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>लॉस</translation>
    </message>
    <message>
        <source>Held-out figure per epoch</source>
        <translation>हर एपॉक पर अलग रखे डेटा का माप</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>एपॉक</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>गति</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>टोकन/से</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>सैंपल/सेकंड</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>हाँ</translation>
    </message>
    <message>
        <source>no</source>
        <translation>नहीं</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>नाम</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>शुरू हुआ</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>मॉडल</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>डेटासेट</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>लर्निंग रेट</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>शेड्यूल</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>ऑप्टिमाइज़र</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>एपॉक</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>बैच</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>एडेप्टर (LoRA)</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>मोड</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>मशीनें</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>स्थिति</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>परिणाम</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>अवधि</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>नोट्स</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>बंद करें</translation>
    </message>
    <message>
        <source>Tokens or samples/s</source>
        <translation>टोकन या सैंपल/से</translation>
    </message>
</context>
<context>
    <name>tandem::ui::DataPreviewDialog</name>
    <message>
        <source>Reading the data…</source>
        <translation>डेटा पढ़ा जा रहा है…</translation>
    </message>
    <message>
        <source>Preview of the data</source>
        <translation>डेटा का पूर्वावलोकन</translation>
    </message>
    <message>
        <source>Tokens per document</source>
        <translation>हर दस्तावेज़ के टोकन</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>दस्तावेज़</translation>
    </message>
    <message>
        <source>The data cannot be previewed: %1</source>
        <translation>डेटा का पूर्वावलोकन नहीं हो सकता: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n conversation(s)</source>
        <translation>
            <numerusform>%n बातचीत</numerusform>
            <numerusform>%n बातचीत</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n document(s)</source>
        <translation>
            <numerusform>%n दस्तावेज़</numerusform>
            <numerusform>%n दस्तावेज़</numerusform>
        </translation>
    </message>
    <message>
        <source>, %1 tokens</source>
        <translation>, %1 टोकन</translation>
    </message>
    <message>
        <source>%1 longer than the context of %2 tokens (each is split across windows)</source>
        <translation>%1 संदर्भ के %2 टोकन से लंबे (हर एक कई विंडो में बँटता है)</translation>
    </message>
    <message>
        <source>%1 cut by a window&apos;s edge</source>
        <translation>%1 विंडो की किनारी से कटे</translation>
    </message>
    <message>
        <source>%1 windows of %2 tokens, %3 of them left out for holding nothing to learn</source>
        <translation>%2 टोकन की %1 विंडो, जिनमें से %3 छोड़ी गईं क्योंकि उनमें सीखने को कुछ नहीं</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s) cannot be read (listed below); a run stops at the first</source>
        <translation>
            <numerusform>%n पंक्ति पढ़ी नहीं जा सकती (नीचे सूची में); रन पहली पर ही रुक जाता है</numerusform>
            <numerusform>%n पंक्तियाँ पढ़ी नहीं जा सकतीं (नीचे सूची में); रन पहली पर ही रुक जाता है</numerusform>
        </translation>
    </message>
    <message>
        <source>Line %1: %2 tokens, %3 trained</source>
        <translation>पंक्ति %1: %2 टोकन, %3 ट्रेन होते हैं</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>टोकन</translation>
    </message>
    <message>
        <source>The context</source>
        <translation>संदर्भ</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>बंद करें</translation>
    </message>
</context>
<context>
    <name>tandem::ui::HistoryModel</name>
    <message>
        <source>Started</source>
        <translation>शुरू हुआ</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>मॉडल</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>डेटासेट</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>स्थिति</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>पूरा हुआ</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>रोका गया</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>विफल</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>चल रहा है</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>बीच में रुका</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>परिणाम</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>गति</translation>
    </message>
    <message>
        <source>%1&apos;s model</source>
        <translation>%1 का मॉडल</translation>
    </message>
    <message>
        <source>Lending to %1</source>
        <translation>%1 को उधार दे रहा है</translation>
    </message>
    <message>
        <source>Lent to %1</source>
        <translation>%1 को उधार दिया</translation>
    </message>
    <message numerus="yes">
        <source>this machine: %n sample(s)</source>
        <translation>
            <numerusform>यह मशीन: %n नमूना</numerusform>
            <numerusform>यह मशीन: %n नमूने</numerusform>
        </translation>
    </message>
    <message>
        <source>%1, loss %2</source>
        <translation>%1, हानि %2</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>नाम</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>सेटिंग्स</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>अवधि</translation>
    </message>
    <message>
        <source>lr %1</source>
        <translation>lr %1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>%n एपॉक</numerusform>
            <numerusform>%n एपॉक</numerusform>
        </translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation>बैच %1</translation>
    </message>
    <message>
        <source>LoRA %1</source>
        <translation>LoRA %1</translation>
    </message>
    <message numerus="yes">
        <source>%n machine(s)</source>
        <translation>
            <numerusform>%n मशीन</numerusform>
            <numerusform>%n मशीनें</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::HubDialog</name>
    <message>
        <source>Get a model</source>
        <translation>मॉडल प्राप्त करें</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub: llama, qwen, smollm…</source>
        <translation>Hugging Face Hub में खोजें: llama, qwen, smollm…</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>खोजें</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>मॉडल</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>डाउनलोड</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>कार्य</translation>
    </message>
    <message>
        <source>Access</source>
        <translation>पहुँच</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>डाउनलोड करें</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>रोकें</translation>
    </message>
    <message>
        <source>On the Hugging Face Hub</source>
        <translation>Hugging Face Hub पर</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>आकार</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>फ़ोल्डर</translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation>यह मॉडल उपयोग करें</translation>
    </message>
    <message>
        <source>On this computer (%1)</source>
        <translation>इस कंप्यूटर पर (%1)</translation>
    </message>
    <message>
        <source>hf_… from huggingface.co/settings/tokens</source>
        <translation>hf_… huggingface.co/settings/tokens से</translation>
    </message>
    <message>
        <source>Save token</source>
        <translation>टोकन सहेजें</translation>
    </message>
    <message>
        <source>Access token</source>
        <translation>एक्सेस टोकन</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>बंद करें</translation>
    </message>
    <message>
        <source>%1 of %2: %3</source>
        <translation>%2 में से %1: %3</translation>
    </message>
    <message numerus="yes">
        <source>Downloaded: %n file(s), %1 (%2 were here already). Choose it below and press Use this model.</source>
        <translation>
            <numerusform>डाउनलोड हुआ: %n फ़ाइल, %1 (%2 पहले से यहाँ थीं)। इसे नीचे चुनें और ‘यह मॉडल उपयोग करें’ दबाएँ।</numerusform>
            <numerusform>डाउनलोड हुआ: %n फ़ाइलें, %1 (%2 पहले से यहाँ थीं)। इसे नीचे चुनें और ‘यह मॉडल उपयोग करें’ दबाएँ।</numerusform>
        </translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>खोज रहे हैं…</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>खुला</translation>
    </message>
    <message>
        <source>Gated: needs a token</source>
        <translation>प्रतिबंधित: टोकन चाहिए</translation>
    </message>
    <message>
        <source>No model on the Hub matches.</source>
        <translation>Hub पर कोई मॉडल मेल नहीं खाता।</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s). Choose one and press Download.</source>
        <translation>
            <numerusform>%n मॉडल। एक चुनें और ‘डाउनलोड करें’ दबाएँ।</numerusform>
            <numerusform>%n मॉडल। एक चुनें और ‘डाउनलोड करें’ दबाएँ।</numerusform>
        </translation>
    </message>
    <message>
        <source>Asking the Hub for %1&apos;s files…</source>
        <translation>Hub से %1 की फ़ाइलें पूछी जा रही हैं…</translation>
    </message>
    <message>
        <source>%1 (incomplete)</source>
        <translation>%1 (अधूरा)</translation>
    </message>
    <message>
        <source>No token: open models download without one; gated ones (Llama, Gemma) need one that has accepted their terms.</source>
        <translation>कोई टोकन नहीं: खुले मॉडल बिना टोकन के डाउनलोड होते हैं; प्रतिबंधित मॉडल (Llama, Gemma) को ऐसा टोकन चाहिए जिसने उनकी शर्तें स्वीकार की हों।</translation>
    </message>
    <message>
        <source>A token is kept in the system&apos;s keychain.</source>
        <translation>एक टोकन सिस्टम के कीचेन में रखा है।</translation>
    </message>
    <message>
        <source>The token in HF_TOKEN is used.</source>
        <translation>HF_TOKEN का टोकन उपयोग होता है।</translation>
    </message>
    <message>
        <source>A token is kept in %1 (readable by you only).</source>
        <translation>एक टोकन %1 में रखा है (केवल आप पढ़ सकते हैं)।</translation>
    </message>
</context>
<context>
    <name>tandem::ui::MainWindow</name>
    <message>
        <source>Export for Ollama / llama.cpp…</source>
        <translation>Ollama / llama.cpp के लिए निर्यात करें…</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>अज्ञात</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, the usual choice</source>
        <translation>Q4_K_M: लगभग %1, सामान्य विकल्प</translation>
    </message>
    <message>
        <source>Q8_0: about %1, nearly as trained</source>
        <translation>Q8_0: लगभग %1, लगभग प्रशिक्षित जैसा</translation>
    </message>
    <message>
        <source>F16: about %1, as trained</source>
        <translation>F16: लगभग %1, प्रशिक्षित जैसा</translation>
    </message>
    <message>
        <source>BF16: about %1, as trained</source>
        <translation>BF16: लगभग %1, प्रशिक्षित जैसा</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>Ollama / llama.cpp के लिए निर्यात</translation>
    </message>
    <message>
        <source>How the weights are stored:</source>
        <translation>भार कैसे सहेजे जाएँ:</translation>
    </message>
    <message>
        <source>Export as GGUF</source>
        <translation>GGUF के रूप में निर्यात करें</translation>
    </message>
    <message>
        <source>GGUF (*.gguf)</source>
        <translation>GGUF (*.gguf)</translation>
    </message>
    <message>
        <source>Export Hugging Face folder…</source>
        <translation>Hugging Face फ़ोल्डर निर्यात करें…</translation>
    </message>
    <message>
        <source>Export adapters (PEFT)…</source>
        <translation>एडेप्टर निर्यात करें (PEFT)…</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>हटाएँ</translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation>क्लस्टर</translation>
    </message>
    <message>
        <source>Load…</source>
        <translation>लोड करें…</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>सहेजें…</translation>
    </message>
    <message>
        <source>Load a run description (JSON, as for tandem train --config)</source>
        <translation>रन विवरण लोड करें (JSON, जैसा tandem train --config के लिए)</translation>
    </message>
    <message>
        <source>Save this run description as JSON</source>
        <translation>यह रन विवरण JSON के रूप में सहेजें</translation>
    </message>
    <message>
        <source>New run</source>
        <translation>नया रन</translation>
    </message>
    <message>
        <source>History</source>
        <translation>इतिहास</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>शुरू करें</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>रोकें</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>फिर से चलाएँ</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>बंद करें</translation>
    </message>
    <message>
        <source>Ready. The demo is set up in New run: press Start.</source>
        <translation>तैयार। डेमो नया रन में सेट है: शुरू करें दबाएँ।</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>लॉग</translation>
    </message>
    <message>
        <source>Paused at step %1. Resume continues where it stopped.</source>
        <translation>स्टेप %1 पर रुका है। फिर से चलाएँ वहीं से आगे बढ़ेगा।</translation>
    </message>
    <message>
        <source>Stopping: saving a checkpoint…</source>
        <translation>बंद हो रहा है: चेकपॉइंट सहेजा जा रहा है…</translation>
    </message>
    <message>
        <source>Training %1 on %2: %3 training samples, %4 steps per epoch</source>
        <translation>%2 पर %1 की ट्रेनिंग: %3 ट्रेनिंग सैंपल, हर एपॉक में %4 स्टेप</translation>
    </message>
    <message>
        <source>A machine left the run: %1. Its share goes to the others. Check that it is switched on and on this network; it can join again.</source>
        <translation>एक मशीन रन से हट गई: %1। उसका हिस्सा बाकी मशीनों को जाता है। जाँचें कि वह चालू है और इसी नेटवर्क पर है; वह फिर से जुड़ सकती है।</translation>
    </message>
    <message>
        <source>This machine cannot join the network: %1. Another program may use the same ports; change them in Settings.</source>
        <translation>यह मशीन नेटवर्क से नहीं जुड़ सकती: %1। शायद कोई दूसरा प्रोग्राम वही पोर्ट इस्तेमाल कर रहा है; सेटिंग्स में उन्हें बदलें।</translation>
    </message>
    <message>
        <source>Paired: %1</source>
        <translation>पेयर हुआ: %1</translation>
    </message>
    <message>
        <source>This machine is training for %1.</source>
        <translation>यह मशीन %1 के लिए ट्रेनिंग कर रही है।</translation>
    </message>
    <message>
        <source>This machine finished its work for %1.</source>
        <translation>इस मशीन ने %1 के लिए अपना काम पूरा किया।</translation>
    </message>
    <message>
        <source>Show Tandem</source>
        <translation>Tandem दिखाएँ</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>बाहर निकलें</translation>
    </message>
    <message>
        <source>Pair a machine…</source>
        <translation>मशीन पेयर करें…</translation>
    </message>
    <message>
        <source>Unpair</source>
        <translation>अनपेयर करें</translation>
    </message>
    <message>
        <source>Unpair %1? It can no longer train with this machine until you pair the two again.</source>
        <translation>%1 को अनपेयर करें? जब तक आप दोनों को फिर से पेयर नहीं करते, वह इस मशीन के साथ ट्रेनिंग नहीं कर पाएगी।</translation>
    </message>
    <message>
        <source>Export TorchScript…</source>
        <translation>TorchScript के रूप में निर्यात करें…</translation>
    </message>
    <message>
        <source>Export safetensors…</source>
        <translation>safetensors के रूप में निर्यात करें…</translation>
    </message>
    <message>
        <source>Resume run</source>
        <translation>रन फिर से चलाएँ</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>फ़ोल्डर खोलें</translation>
    </message>
    <message>
        <source>&amp;Tandem</source>
        <translation>&amp;Tandem</translation>
    </message>
    <message>
        <source>&amp;Load run description…</source>
        <translation>रन विवरण &amp;लोड करें…</translation>
    </message>
    <message>
        <source>&amp;Save run description…</source>
        <translation>रन विवरण &amp;सहेजें…</translation>
    </message>
    <message>
        <source>S&amp;ettings…</source>
        <translation>&amp;सेटिंग्स…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;बाहर निकलें</translation>
    </message>
    <message>
        <source>&amp;Machines</source>
        <translation>&amp;मशीनें</translation>
    </message>
    <message>
        <source>Set up &amp;pairing…</source>
        <translation>&amp;पेयरिंग सेट करें…</translation>
    </message>
    <message>
        <source>&amp;Add a machine by address…</source>
        <translation>पते से मशीन &amp;जोड़ें…</translation>
    </message>
    <message>
        <source>Add a machine</source>
        <translation>मशीन जोड़ें</translation>
    </message>
    <message>
        <source>IP address or host name of the machine:</source>
        <translation>मशीन का IP पता या होस्ट नाम:</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;सहायता</translation>
    </message>
    <message>
        <source>User &amp;guide</source>
        <translation>उपयोगकर्ता &amp;गाइड</translation>
    </message>
    <message>
        <source>&amp;About Tandem</source>
        <translation>Tandem के &amp;बारे में</translation>
    </message>
    <message>
        <source>About Tandem</source>
        <translation>Tandem के बारे में</translation>
    </message>
    <message>
        <source>Tandem %1
Trains one PyTorch model across your own machines.
Protocol version %2.</source>
        <translation>Tandem %1
आपकी अपनी मशीनों पर एक PyTorch मॉडल को ट्रेन करता है।
प्रोटोकॉल संस्करण %2।</translation>
    </message>
    <message>
        <source>A device ran out of memory (%1). Lower the batch size or leave that machine out, then start again.</source>
        <translation>एक डिवाइस की मेमोरी खत्म हो गई (%1)। बैच का आकार घटाएँ या उस मशीन को हटाएँ, फिर दोबारा शुरू करें।</translation>
    </message>
    <message>
        <source>The dataset cannot be used: %1. Check the folder or file and its format (the user guide lists the formats).</source>
        <translation>डेटासेट इस्तेमाल नहीं हो सकता: %1। फ़ोल्डर या फ़ाइल और उसका फ़ॉर्मेट जाँचें (उपयोगकर्ता गाइड में फ़ॉर्मेट की सूची है)।</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. Save it with torch.jit.save after torch.jit.script, and check that it returns class scores.</source>
        <translation>मॉडल इस्तेमाल नहीं हो सकता: %1। उसे torch.jit.script के बाद torch.jit.save से सहेजें, और जाँचें कि वह क्लास स्कोर लौटाता है।</translation>
    </message>
    <message>
        <source>A machine could not join: %1.</source>
        <translation>एक मशीन नहीं जुड़ सकी: %1।</translation>
    </message>
    <message>
        <source>The run stopped with an error: %1</source>
        <translation>रन एक त्रुटि के साथ रुक गया: %1</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>मॉडल और डेटासेट की जाँच हो रही है…</translation>
    </message>
    <message>
        <source>No machine is chosen to train. Tick at least one machine under New run → Machines.</source>
        <translation>ट्रेनिंग के लिए कोई मशीन नहीं चुनी गई। नया रन → मशीनें में कम से कम एक मशीन चुनें।</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>शुरू हो रहा है…</translation>
    </message>
    <message numerus="yes">
        <source>Starting; inviting %n machine(s)…</source>
        <translation>
            <numerusform>शुरू हो रहा है; %n मशीन को आमंत्रित किया जा रहा है…</numerusform>
            <numerusform>शुरू हो रहा है; %n मशीनों को आमंत्रित किया जा रहा है…</numerusform>
        </translation>
    </message>
    <message>
        <source>Run folder: %1</source>
        <translation>रन फ़ोल्डर: %1</translation>
    </message>
    <message>
        <source>That run finished or has no checkpoint; start a new run instead.</source>
        <translation>वह रन पूरा हो चुका है या उसका कोई चेकपॉइंट नहीं है; इसके बजाय नया रन शुरू करें।</translation>
    </message>
    <message>
        <source>Cannot resume: %1</source>
        <translation>फिर से नहीं चला सकते: %1</translation>
    </message>
    <message>
        <source>Stopped at step %1; a checkpoint is saved.</source>
        <translation>स्टेप %1 पर रोका गया; चेकपॉइंट सहेजा गया है।</translation>
    </message>
    <message>
        <source>The run stopped at step %1. Resume it from History.</source>
        <translation>रन स्टेप %1 पर रुका। इतिहास से उसे फिर से चलाएँ।</translation>
    </message>
    <message>
        <source>The run failed.</source>
        <translation>रन विफल हो गया।</translation>
    </message>
    <message>
        <source>Choose a run in History first.</source>
        <translation>पहले इतिहास में एक रन चुनें।</translation>
    </message>
    <message>
        <source>Export as TorchScript</source>
        <translation>TorchScript के रूप में निर्यात करें</translation>
    </message>
    <message>
        <source>Export as safetensors</source>
        <translation>safetensors के रूप में निर्यात करें</translation>
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
        <translation>उस रन में निर्यात करने के लिए कोई चेकपॉइंट नहीं है।</translation>
    </message>
    <message>
        <source>Exported to %1. In Python: %2</source>
        <translation>%1 में निर्यात किया गया। Python में: %2</translation>
    </message>
    <message>
        <source>The export failed: %1</source>
        <translation>निर्यात विफल: %1</translation>
    </message>
    <message>
        <source>Pair with %1?</source>
        <translation>%1 के साथ पेयर करें?</translation>
    </message>
    <message>
        <source>%1 (%2) wants to pair with this machine.

Does it show this code?

%3 %4</source>
        <translation>%1 (%2) इस मशीन के साथ पेयर करना चाहती है।

क्या वह यही कोड दिखा रही है?

%3 %4</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>कोड मेल खाते हैं</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>कोड अलग हैं</translation>
    </message>
    <message>
        <source>Save run description</source>
        <translation>रन विवरण सहेजें</translation>
    </message>
    <message>
        <source>Run description (*.json)</source>
        <translation>रन विवरण (*.json)</translation>
    </message>
    <message>
        <source>Saved the run description to %1; train it with: tandem train --config %1</source>
        <translation>रन विवरण %1 में सहेजा गया; इससे ट्रेन करें: tandem train --config %1</translation>
    </message>
    <message>
        <source>Load run description</source>
        <translation>रन विवरण लोड करें</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>ट्रेनिंग जारी</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>रुका हुआ</translation>
    </message>
    <message>
        <source>Stopping</source>
        <translation>बंद हो रहा है</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>खाली</translation>
    </message>
    <message>
        <source>Quit Tandem</source>
        <translation>Tandem से बाहर निकलें</translation>
    </message>
    <message>
        <source>A run is in progress. Stop it (a checkpoint is saved, so it can be resumed) and quit?</source>
        <translation>एक रन चल रहा है। उसे बंद करें (चेकपॉइंट सहेजा जाएगा, ताकि वह फिर से चल सके) और बाहर निकलें?</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>जोड़ें</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>रद्द करें</translation>
    </message>
    <message>
        <source>Stop and quit</source>
        <translation>बंद करके बाहर निकलें</translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation>स्वीप</translation>
    </message>
    <message>
        <source>TorchScript (*.pt);;safetensors (*.safetensors)</source>
        <translation>TorchScript (*.pt);;safetensors (*.safetensors)</translation>
    </message>
    <message>
        <source>Try it…</source>
        <translation>आज़माएँ…</translation>
    </message>
    <message>
        <source>Let a language model continue a prompt of yours.</source>
        <translation>भाषा मॉडल को आपका लिखा पाठ आगे बढ़ाने दें।</translation>
    </message>
    <message>
        <source>Epoch %1: %2, test loss %3</source>
        <translation>युग %1: %2, परीक्षण हानि %3</translation>
    </message>
    <message>
        <source>The run finished: %1. Export the model from History.</source>
        <translation>रन पूरा हुआ: %1। मॉडल को इतिहास से निर्यात करें।</translation>
    </message>
    <message>
        <source>Pausing after the step in progress…</source>
        <translation>चल रहे चरण के बाद रुक रहा है…</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 done · evaluating on %3 test samples… %4 %</source>
        <translation>एपॉक %1 / %2 पूरा · %3 टेस्ट सैंपल पर मूल्यांकन… %4 %</translation>
    </message>
    <message>
        <source>device %1</source>
        <translation>डिवाइस %1</translation>
    </message>
    <message>
        <source>Device ID: %1
Address: %2</source>
        <translation>डिवाइस ID: %1
पता: %2</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>निर्यात करें</translation>
    </message>
    <message>
        <source>Stop lending</source>
        <translation>देना बंद करें</translation>
    </message>
    <message>
        <source>End this machine&apos;s part in the other machine&apos;s run; the run goes on without it.</source>
        <translation>दूसरी मशीन के रन में इस मशीन का हिस्सा समाप्त करें; रन इसके बिना चलता रहेगा।</translation>
    </message>
    <message>
        <source>This machine is %1 (device %2), listening on port %3</source>
        <translation>यह मशीन %1 है (डिवाइस %2), पोर्ट %3 पर सुन रही है</translation>
    </message>
    <message>
        <source>Training for %1</source>
        <translation>%1 के लिए प्रशिक्षण</translation>
    </message>
    <message>
        <source>This machine finished its work for %1. The charts show its part of that run.</source>
        <translation>इस मशीन ने %1 के लिए अपना काम पूरा कर लिया। चार्ट उस रन में इसका हिस्सा दिखाते हैं।</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1</source>
        <translation>यह मशीन %1 के रन को दी गई है</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1 (device %2)</source>
        <translation>यह मशीन %1 (डिवाइस %2) के रन को दी गई है</translation>
    </message>
    <message>
        <source>%1: receiving the model and the data…</source>
        <translation>%1: मॉडल और डेटा प्राप्त हो रहे हैं…</translation>
    </message>
    <message>
        <source>%1: %2 paused the run; this machine waits.</source>
        <translation>%1: %2 ने रन रोक दिया है; यह मशीन प्रतीक्षा कर रही है।</translation>
    </message>
    <message>
        <source>%1 on %2: waiting for the first step…</source>
        <translation>%1, %2 पर: पहले चरण की प्रतीक्षा…</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>चरण %1</translation>
    </message>
    <message>
        <source>this machine&apos;s share %1 %</source>
        <translation>इस मशीन का हिस्सा %1 %</translation>
    </message>
    <message>
        <source>loss %1</source>
        <translation>लॉस %1</translation>
    </message>
    <message>
        <source>%1 on %2</source>
        <translation>%1, %2 पर</translation>
    </message>
    <message>
        <source>This machine is lending its device to another run: press Stop lending first.</source>
        <translation>यह मशीन अपना डिवाइस दूसरे रन को दे रही है: पहले &quot;देना बंद करें&quot; दबाएँ।</translation>
    </message>
    <message>
        <source>Mode: %1</source>
        <translation>मोड: %1</translation>
    </message>
    <message>
        <source>The model cannot be used: %1.</source>
        <translation>मॉडल उपयोग नहीं हो सकता: %1.</translation>
    </message>
    <message>
        <source>Export the Hugging Face folder as</source>
        <translation>Hugging Face फ़ोल्डर इस नाम से निर्यात करें</translation>
    </message>
    <message>
        <source>Export the adapters as</source>
        <translation>एडैप्टर इस नाम से निर्यात करें</translation>
    </message>
    <message>
        <source>Resuming…</source>
        <translation>फिर से शुरू हो रहा है…</translation>
    </message>
    <message>
        <source>Ready: press Start to train with these settings.</source>
        <translation>तैयार: इन सेटिंग्स से प्रशिक्षण के लिए Start दबाएँ।</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 · step %3 of %4 · elapsed %5 · about %6 left · %7 · loss %8</source>
        <translation>युग %1/%2 · चरण %3/%4 · बीता %5 · लगभग %6 शेष · %7 · लॉस %8</translation>
    </message>
    <message>
        <source>Finished: %1, %2.</source>
        <translation>पूरा: %1, %2।</translation>
    </message>
    <message>
        <source>This machine lent its device to that run; its model is on the machine that ran it.</source>
        <translation>इस मशीन ने उस रन को अपना डिवाइस उधार दिया था; उसका मॉडल उस मशीन पर है जिसने उसे चलाया।</translation>
    </message>
    <message>
        <source>New run like this</source>
        <translation>इसके जैसा नया रन</translation>
    </message>
    <message>
        <source>Puts this run&apos;s settings in the New run form.</source>
        <translation>इस रन की सेटिंग नया रन फ़ॉर्म में डालता है।</translation>
    </message>
    <message>
        <source>Folder: %1</source>
        <translation>फ़ोल्डर: %1</translation>
    </message>
    <message>
        <source>No file manager opened the folder. The run&apos;s files are in %1</source>
        <translation>किसी फ़ाइल मैनेजर ने फ़ोल्डर नहीं खोला। रन की फ़ाइलें %1 में हैं</translation>
    </message>
    <message>
        <source>Not started.</source>
        <translation>शुरू नहीं हुआ।</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. The user guide lists the model families Tandem reads.</source>
        <translation>मॉडल इस्तेमाल नहीं हो सकता: %1। यूज़र गाइड में वे मॉडल परिवार हैं जिन्हें Tandem पढ़ता है।</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, hardly smaller here: this model&apos;s rows are not whole blocks of 256 values, which 4 bits need, so they are stored at 5 to 8 bits</source>
        <translation>Q4_K_M: लगभग %1, यहाँ शायद ही छोटा: इस मॉडल की पंक्तियाँ 256 मानों के पूरे ब्लॉक नहीं हैं, जो 4 बिट के लिए ज़रूरी हैं, इसलिए वे 5 से 8 बिट में रखी जाती हैं</translation>
    </message>
    <message>
        <source>That run&apos;s record has no settings to start from: %1</source>
        <translation>उस रन के रिकॉर्ड में शुरू करने लायक सेटिंग नहीं हैं: %1</translation>
    </message>
    <message>
        <source>This machine finished its work for %1 before its first step.</source>
        <translation>इस मशीन ने %1 के लिए अपना काम पहले कदम से पहले ही खत्म कर दिया।</translation>
    </message>
    <message>
        <source>%1 stopped lending itself to this run. Its share goes to the others.</source>
        <translation>%1 ने इस रन के लिए खुद को उधार देना बंद कर दिया। उसका हिस्सा बाकियों को जाता है।</translation>
    </message>
    <message>
        <source>Notes…</source>
        <translation>नोट्स…</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>तुलना करें</translation>
    </message>
    <message>
        <source>Choose two or more runs (Ctrl+click) to see their curves and settings side by side.</source>
        <translation>दो या ज़्यादा रन चुनें (Ctrl+क्लिक) ताकि उनके कर्व और सेटिंग साथ-साथ दिखें।</translation>
    </message>
    <message>
        <source>Notes on %1</source>
        <translation>%1 पर नोट्स</translation>
    </message>
    <message>
        <source>What to remember of this run (shown in History and when comparing runs):</source>
        <translation>इस रन के बारे में क्या याद रखना है (इतिहास में और रनों की तुलना करते समय दिखता है):</translation>
    </message>
    <message>
        <source>%1 unpaired this machine. To train together again, pair the two (Machines → Set up pairing).</source>
        <translation>%1 ने इस मशीन की पेयरिंग हटा दी। फिर से साथ ट्रेन करने के लिए दोनों को दोबारा पेयर करें (मशीनें → पेयरिंग सेट करें)।</translation>
    </message>
    <message>
        <source>Exported to %1.</source>
        <translation>%1 में एक्सपोर्ट किया गया।</translation>
    </message>
    <message>
        <source>Ollama is not installed on this machine; where it is: %1. LM Studio and llama.cpp open the file as it is.</source>
        <translation>इस मशीन पर Ollama इंस्टॉल नहीं है; जहाँ है वहाँ: %1। LM Studio और llama.cpp फ़ाइल को जैसी है वैसे खोलते हैं।</translation>
    </message>
    <message>
        <source>Added to Ollama as %1: ollama run %1</source>
        <translation>Ollama में %1 के नाम से जोड़ा गया: ollama run %1</translation>
    </message>
    <message>
        <source>Ollama could not add it (%1). By hand: %2</source>
        <translation>Ollama इसे नहीं जोड़ सका (%1)। हाथ से: %2</translation>
    </message>
    <message>
        <source>Adding it to Ollama as %1…</source>
        <translation>Ollama में %1 के नाम से जोड़ा जा रहा है…</translation>
    </message>
</context>
<context>
    <name>tandem::ui::PeerModel</name>
    <message>
        <source>Machine</source>
        <translation>मशीन</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>स्थिति</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>डिवाइस</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>भूमिका</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>सैंपल/सेकंड</translation>
    </message>
    <message>
        <source>Device ID %1
%2
Tandem %3</source>
        <translation>डिवाइस ID %1
%2
Tandem %3</translation>
    </message>
    <message>
        <source>%1 (this machine)</source>
        <translation>%1 (यह मशीन)</translation>
    </message>
    <message>
        <source>Online</source>
        <translation>ऑनलाइन</translation>
    </message>
    <message>
        <source>Offline</source>
        <translation>ऑफ़लाइन</translation>
    </message>
    <message>
        <source>Online, paired</source>
        <translation>ऑनलाइन, पेयर है</translation>
    </message>
    <message>
        <source>Online, not paired</source>
        <translation>ऑनलाइन, पेयर नहीं है</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>खाली</translation>
    </message>
    <message>
        <source>Coordinator</source>
        <translation>समन्वयक</translation>
    </message>
    <message>
        <source>Coordinator and worker</source>
        <translation>समन्वयक और वर्कर</translation>
    </message>
    <message>
        <source>Idle: would slow the run (%1 ms a step before its first sample, against a %2 ms step)</source>
        <translation>खाली: रन को धीमा कर देगा (पहले सैंपल से पहले हर स्टेप में %1 ms, जबकि इसके बिना स्टेप %2 ms का है)</translation>
    </message>
    <message>
        <source>Idle: slowed the run (its steps took %1 ms, against %2 ms without it)</source>
        <translation>खाली: रन को धीमा कर रहा था (इसके साथ स्टेप %1 ms के थे, जबकि इसके बिना %2 ms के)</translation>
    </message>
    <message>
        <source>The run measures it again after a few dozen steps, then less often while it would still slow the run, and gives it a share again when it would make steps shorter: when its load lifts, its link gets faster, or the batch grows.</source>
        <translation>रन कुछ दर्जन स्टेप के बाद इसे फिर से मापता है, फिर जब तक यह रन को धीमा करता रहे तब तक कम बार, और जब यह स्टेप छोटे कर सके तब इसे फिर हिस्सा देता है: जब इसका लोड घटे, इसका लिंक तेज़ हो, या बैच बढ़े।</translation>
    </message>
    <message>
        <source>Worker</source>
        <translation>वर्कर</translation>
    </message>
    <message>
        <source>Online, but its Tandem %1 cannot work with this one: install the same version on both</source>
        <translation>ऑनलाइन, लेकिन इसका Tandem %1 इसके साथ काम नहीं कर सकता: दोनों पर एक ही संस्करण इंस्टॉल करें</translation>
    </message>
    <message>
        <source>Device ID</source>
        <translation>डिवाइस ID</translation>
    </message>
    <message>
        <source>This machine&apos;s part of each step&apos;s samples, as the run assigns them: the machine that lends its device shows the same figure</source>
        <translation>हर चरण के नमूनों में इस मशीन का हिस्सा, जैसा रन बाँटता है: डिवाइस उधार देने वाली मशीन वही आँकड़ा दिखाती है</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>हिस्सा</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>टोकन/से</translation>
    </message>
    <message>
        <source>In a sharded run: which range of the trainable values this machine owns, what it keeps for it (the fp32 weights, the optimizer&apos;s state and the gradients&apos; sum), and the bytes its links sent and received in the last step</source>
        <translation>शार्ड किए गए रन (--shard) में: प्रशिक्षित होने वाले मानों की कौन-सी श्रेणी इस मशीन के पास है, वह उसके लिए क्या रखती है (fp32 भार, ऑप्टिमाइज़र की स्थिति और ग्रेडिएंट का योग), और पिछले स्टेप में उसके लिंक ने कितने बाइट भेजे और प्राप्त किए</translation>
    </message>
    <message>
        <source>Shard</source>
        <translation>शार्ड</translation>
    </message>
    <message>
        <source>%1 of %2, %3, %4 a step</source>
        <translation>%2 में से %1, %3, हर स्टेप में %4</translation>
    </message>
    <message>
        <source>%1 of %2, %3</source>
        <translation>%2 में से %1, %3</translation>
    </message>
</context>
<context>
    <name>tandem::ui::RunForm</name>
    <message>
        <source>Text file (bytes, or a Hugging Face model&apos;s tokenizer)</source>
        <translation>टेक्स्ट फ़ाइल (बाइट, या Hugging Face मॉडल का टोकनाइज़र)</translation>
    </message>
    <message>
        <source>JSON Lines of documents (&quot;text&quot; a line; a Hugging Face model)</source>
        <translation>दस्तावेज़ों की JSON Lines (हर पंक्ति में &quot;text&quot;; Hugging Face मॉडल)</translation>
    </message>
    <message>
        <source>Chat conversations (JSON Lines of &quot;messages&quot;; a Hugging Face model)</source>
        <translation>चैट बातचीत (&quot;messages&quot; की JSON Lines; Hugging Face मॉडल)</translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl *.json);;All files (*)</source>
        <translation>JSON Lines (*.jsonl *.json);;सभी फ़ाइलें (*)</translation>
    </message>
    <message>
        <source>A Hugging Face folder… (%1)</source>
        <translation>Hugging Face फ़ोल्डर… (%1)</translation>
    </message>
    <message>
        <source>empty: train every weight</source>
        <translation>खाली: सभी वज़न प्रशिक्षित करें</translation>
    </message>
    <message>
        <source>Low-rank adapters: only they train, the model&apos;s own weights stay frozen. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</source>
        <translation>लो-रैंक एडेप्टर: केवल ये प्रशिक्षित होते हैं, मॉडल के अपने वज़न स्थिर रहते हैं। r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</translation>
    </message>
    <message>
        <source>Recompute activations (less memory, more time)</source>
        <translation>एक्टिवेशन फिर से गणना करें (कम मेमोरी, अधिक समय)</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>एडेप्टर (LoRA)</translation>
    </message>
    <message>
        <source>a folder with config.json and model.safetensors</source>
        <translation>config.json और model.safetensors वाला फ़ोल्डर</translation>
    </message>
    <message>
        <source>Choose a Hugging Face model folder</source>
        <translation>Hugging Face मॉडल फ़ोल्डर चुनें</translation>
    </message>
    <message>
        <source>Choose the Hugging Face model&apos;s folder.</source>
        <translation>Hugging Face मॉडल का फ़ोल्डर चुनें।</translation>
    </message>
    <message>
        <source>mnist-cnn: convolutional network for 28×28 images</source>
        <translation>mnist-cnn: 28×28 छवियों के लिए कन्वोल्यूशनल नेटवर्क</translation>
    </message>
    <message>
        <source>mlp: small fully connected network</source>
        <translation>mlp: छोटा पूरी तरह जुड़ा नेटवर्क</translation>
    </message>
    <message>
        <source>resnet8: small ResNet for 32×32 colour images</source>
        <translation>resnet8: 32×32 रंगीन छवियों के लिए छोटा ResNet</translation>
    </message>
    <message>
        <source>Your TorchScript file…</source>
        <translation>आपकी TorchScript फ़ाइल…</translation>
    </message>
    <message>
        <source>model.pt saved with torch.jit.save</source>
        <translation>torch.jit.save से सहेजी गई model.pt</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>चुनें…</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>मॉडल</translation>
    </message>
    <message>
        <source>Fashion-MNIST (built in)</source>
        <translation>Fashion-MNIST (अंतर्निहित)</translation>
    </message>
    <message>
        <source>Fashion-MNIST folder (IDX files)</source>
        <translation>Fashion-MNIST फ़ोल्डर (IDX फ़ाइलें)</translation>
    </message>
    <message>
        <source>MNIST folder (IDX files)</source>
        <translation>MNIST फ़ोल्डर (IDX फ़ाइलें)</translation>
    </message>
    <message>
        <source>CIFAR-10 folder (binary version)</source>
        <translation>CIFAR-10 फ़ोल्डर (बाइनरी संस्करण)</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>डेटासेट</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>मशीनें</translation>
    </message>
    <message>
        <source>Synchronous: one model, exact (best on a fast network)</source>
        <translation>सिंक्रोनस: एक मॉडल, सटीक (तेज़ नेटवर्क पर सबसे अच्छा)</translation>
    </message>
    <message>
        <source>Asynchronous: no waiting for the slowest machine</source>
        <translation>एसिंक्रोनस: सबसे धीमी मशीन का इंतज़ार नहीं</translation>
    </message>
    <message>
        <source>Local SGD: several local steps per exchange (slow networks)</source>
        <translation>लोकल SGD: हर आदान-प्रदान पर कई लोकल स्टेप (धीमे नेटवर्क)</translation>
    </message>
    <message>
        <source>Automatic: measures the network, then synchronous or streaming</source>
        <translation>स्वचालित: नेटवर्क मापता है, फिर सिंक्रोनस या स्ट्रीमिंग</translation>
    </message>
    <message>
        <source>Streaming local SGD: exchanges overlap training (Wi-Fi)</source>
        <translation>स्ट्रीमिंग लोकल SGD: आदान-प्रदान ट्रेनिंग के साथ-साथ (Wi-Fi)</translation>
    </message>
    <message>
        <source>8-bit blocks (a quarter of the traffic)</source>
        <translation>8-बिट ब्लॉक (एक-चौथाई ट्रैफ़िक)</translation>
    </message>
    <message>
        <source>4-bit blocks (an eighth of the traffic)</source>
        <translation>4-बिट ब्लॉक (आठवाँ हिस्सा ट्रैफ़िक)</translation>
    </message>
    <message>
        <source>Local SGD updates</source>
        <translation>लोकल SGD अपडेट</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>मोड</translation>
    </message>
    <message>
        <source>32-bit floats (exact)</source>
        <translation>32-बिट फ़्लोट (सटीक)</translation>
    </message>
    <message>
        <source>16-bit floats (half the traffic)</source>
        <translation>16-बिट फ़्लोट (आधा ट्रैफ़िक)</translation>
    </message>
    <message>
        <source>bfloat16 (half the traffic, wider range)</source>
        <translation>bfloat16 (आधा ट्रैफ़िक, बड़ी रेंज)</translation>
    </message>
    <message>
        <source>Wire precision</source>
        <translation>वायर प्रिसिज़न</translation>
    </message>
    <message>
        <source>Device on this machine</source>
        <translation>इस मशीन का डिवाइस</translation>
    </message>
    <message>
        <source>Best available: %1</source>
        <translation>सबसे अच्छा उपलब्ध: %1</translation>
    </message>
    <message>
        <source>Compute precision</source>
        <translation>गणना परिशुद्धता</translation>
    </message>
    <message>
        <source>bfloat16 autocast (faster on recent CPUs and GPUs)</source>
        <translation>bfloat16 ऑटोकास्ट (नए CPU और GPU पर तेज़)</translation>
    </message>
    <message>
        <source>16-bit autocast (NVIDIA and Apple GPUs)</source>
        <translation>16-बिट ऑटोकास्ट (NVIDIA और Apple GPU)</translation>
    </message>
    <message>
        <source>SGD with momentum</source>
        <translation>मोमेंटम के साथ SGD</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>ऑप्टिमाइज़र</translation>
    </message>
    <message>
        <source>constant</source>
        <translation>स्थिर</translation>
    </message>
    <message>
        <source>cosine decay</source>
        <translation>कोसाइन क्षय</translation>
    </message>
    <message>
        <source>warm-up steps: </source>
        <translation>वार्म-अप स्टेप: </translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>लर्निंग रेट</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>एपॉक</translation>
    </message>
    <message>
        <source>Batch (all machines)</source>
        <translation>बैच (सभी मशीनें)</translation>
    </message>
    <message>
        <source>a folder</source>
        <translation>एक फ़ोल्डर</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>%1 नहीं लिख सकते: %2</translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation>%1 नहीं पढ़ सकते: %2</translation>
    </message>
    <message>
        <source>%1 is not a run description: %2</source>
        <translation>%1 रन विवरण नहीं है: %2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Choose a TorchScript model</source>
        <translation>TorchScript मॉडल चुनें</translation>
    </message>
    <message>
        <source>TorchScript (*.pt *.pth);;All files (*)</source>
        <translation>TorchScript (*.pt *.pth);;सभी फ़ाइलें (*)</translation>
    </message>
    <message>
        <source>Choose the dataset folder</source>
        <translation>डेटासेट फ़ोल्डर चुनें</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>मॉडल और डेटासेट की जाँच हो रही है…</translation>
    </message>
    <message>
        <source>Choose a TorchScript file for the model.</source>
        <translation>मॉडल के लिए एक TorchScript फ़ाइल चुनें।</translation>
    </message>
    <message>
        <source>Choose where the dataset is.</source>
        <translation>चुनें कि डेटासेट कहाँ है।</translation>
    </message>
    <message>
        <source>Check model and data</source>
        <translation>मॉडल और डेटा जाँचें</translation>
    </message>
    <message>
        <source>gpt: small language model over the bytes of a text</source>
        <translation>gpt: पाठ के बाइट्स पर छोटा भाषा मॉडल</translation>
    </message>
    <message>
        <source>CSV file (label= or target= column and numbers)</source>
        <translation>CSV फ़ाइल (label= या target= स्तंभ और संख्याएँ)</translation>
    </message>
    <message>
        <source>Token file (nanoGPT .bin)</source>
        <translation>टोकन फ़ाइल (nanoGPT .bin)</translation>
    </message>
    <message>
        <source>NumPy arrays (.npz with x_train, y_train)</source>
        <translation>NumPy सरणियाँ (x_train, y_train वाली .npz)</translation>
    </message>
    <message>
        <source>Image folder (one subfolder per class)</source>
        <translation>चित्र फ़ोल्डर (हर वर्ग का एक उप-फ़ोल्डर)</translation>
    </message>
    <message>
        <source>Automatic: from the model&apos;s output and the data</source>
        <translation>स्वचालित: मॉडल के आउटपुट और डेटा से</translation>
    </message>
    <message>
        <source>Cross-entropy (classes, next token)</source>
        <translation>क्रॉस-एन्ट्रॉपी (वर्ग, अगला टोकन)</translation>
    </message>
    <message>
        <source>Mean squared error (regression)</source>
        <translation>माध्य वर्ग त्रुटि (रिग्रेशन)</translation>
    </message>
    <message>
        <source>Mean absolute error (regression)</source>
        <translation>माध्य निरपेक्ष त्रुटि (रिग्रेशन)</translation>
    </message>
    <message>
        <source>Huber (regression with outliers)</source>
        <translation>ह्यूबर (बाहरी मानों वाला रिग्रेशन)</translation>
    </message>
    <message>
        <source>Binary cross-entropy (several labels each)</source>
        <translation>बाइनरी क्रॉस-एन्ट्रॉपी (हर नमूने के कई लेबल)</translation>
    </message>
    <message>
        <source>The model&apos;s own loss() method</source>
        <translation>मॉडल की अपनी loss() विधि</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>हानि</translation>
    </message>
    <message>
        <source>a .csv file[,target=COLUMN to predict a number]</source>
        <translation>एक .csv फ़ाइल[,target=स्तंभ संख्या अनुमान के लिए]</translation>
    </message>
    <message>
        <source>a text file[,context=256]</source>
        <translation>एक पाठ फ़ाइल[,context=256]</translation>
    </message>
    <message>
        <source>a .bin file[,dtype=uint16][,context=256]</source>
        <translation>एक .bin फ़ाइल[,dtype=uint16][,context=256]</translation>
    </message>
    <message>
        <source>a folder of class folders[,size=64]</source>
        <translation>वर्ग फ़ोल्डरों वाला फ़ोल्डर[,size=64]</translation>
    </message>
    <message>
        <source>a file</source>
        <translation>एक फ़ाइल</translation>
    </message>
    <message>
        <source>Choose the dataset file</source>
        <translation>डेटासेट फ़ाइल चुनें</translation>
    </message>
    <message>
        <source>CSV (*.csv);;All files (*)</source>
        <translation>CSV (*.csv);;सभी फ़ाइलें (*)</translation>
    </message>
    <message>
        <source>Text (*.txt *.md);;All files (*)</source>
        <translation>पाठ (*.txt *.md);;सभी फ़ाइलें (*)</translation>
    </message>
    <message>
        <source>Token files (*.bin);;All files (*)</source>
        <translation>टोकन फ़ाइलें (*.bin);;सभी फ़ाइलें (*)</translation>
    </message>
    <message>
        <source>NumPy (*.npz);;All files (*)</source>
        <translation>NumPy (*.npz);;सभी फ़ाइलें (*)</translation>
    </message>
    <message>
        <source>all of them</source>
        <translation>सभी</translation>
    </message>
    <message>
        <source>Train on the first N training samples only; 0 uses them all.</source>
        <translation>केवल पहले N ट्रेनिंग सैंपल पर ट्रेन करें; 0 सभी का उपयोग करता है।</translation>
    </message>
    <message>
        <source>Training samples</source>
        <translation>ट्रेनिंग सैंपल</translation>
    </message>
    <message>
        <source>Base as stored</source>
        <translation>आधार जैसा सहेजा गया</translation>
    </message>
    <message>
        <source>Base in 8 bits</source>
        <translation>आधार 8 बिट में</translation>
    </message>
    <message>
        <source>Base in 4 bits (QLoRA)</source>
        <translation>आधार 4 बिट में (QLoRA)</translation>
    </message>
    <message>
        <source>The frozen model&apos;s own weights in 4 bits (nf4) take about a quarter of bf16&apos;s memory: a 7-8B model fits a 12 GB card</source>
        <translation>मॉडल के जमे हुए भार 4 बिट (nf4) में bf16 की लगभग एक-चौथाई मेमोरी लेते हैं: 7-8B का मॉडल 12 GB कार्ड में आ जाता है</translation>
    </message>
    <message>
        <source>No</source>
        <translation>नहीं</translation>
    </message>
    <message>
        <source>Q4_K_M: smallest, about 4.9 bits a weight</source>
        <translation>Q4_K_M: सबसे छोटा, हर भार लगभग 4.9 बिट</translation>
    </message>
    <message>
        <source>Q8_0: 8.5 bits a weight, close to the original</source>
        <translation>Q8_0: हर भार 8.5 बिट, मूल के निकट</translation>
    </message>
    <message>
        <source>F16: 16 bits, as trained</source>
        <translation>F16: 16 बिट, जैसा प्रशिक्षित</translation>
    </message>
    <message>
        <source>BF16: 16 bits, as trained</source>
        <translation>BF16: 16 बिट, जैसा प्रशिक्षित</translation>
    </message>
    <message>
        <source>At the end of the run, also write model.gguf and model.Modelfile in the run&apos;s folder: `ollama create NAME -f model.Modelfile` adds it to Ollama, and LM Studio and llama.cpp open model.gguf as it is</source>
        <translation>रन के अंत में उसके फ़ोल्डर में model.gguf और model.Modelfile भी लिखें: `ollama create NAME -f model.Modelfile` इसे Ollama में जोड़ता है, और LM Studio व llama.cpp model.gguf को सीधे खोलते हैं</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>Ollama / llama.cpp के लिए निर्यात</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> टोकन</translation>
    </message>
    <message>
        <source>How many tokens the model sees at once: each training window holds this many, and predicts each next one.</source>
        <translation>मॉडल एक बार में कितने टोकन देखता है: हर प्रशिक्षण विंडो में इतने होते हैं, और वह हर अगला टोकन अनुमानित करता है।</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>संदर्भ</translation>
    </message>
    <message>
        <source>= %1 tokens a step</source>
        <translation>= प्रति चरण %1 टोकन</translation>
    </message>
    <message>
        <source>Batch set to %1 for this data; set it yourself to keep another.</source>
        <translation>इस डेटा के लिए बैच %1 किया गया; कोई और रखने के लिए इसे स्वयं सेट करें।</translation>
    </message>
    <message>
        <source>Preference pairs (JSON Lines of &quot;prompt&quot;, &quot;chosen&quot; and &quot;rejected&quot;; a Hugging Face model)</source>
        <translation>पसंद के जोड़े (&quot;prompt&quot;, &quot;chosen&quot; और &quot;rejected&quot; की JSON Lines; Hugging Face मॉडल)</translation>
    </message>
    <message>
        <source>DPO (preference pairs; LoRA adapters, whose base is the reference)</source>
        <translation>DPO (पसंद के जोड़े; LoRA एडेप्टर, जिनका आधार ही संदर्भ है)</translation>
    </message>
    <message>
        <source>ORPO (preference pairs; no reference model)</source>
        <translation>ORPO (पसंद के जोड़े; कोई संदर्भ मॉडल नहीं)</translation>
    </message>
    <message>
        <source>DPO&apos;s β: how far the model may move from the reference. ORPO&apos;s λ: the weight of the preference term beside the chosen answer&apos;s loss.</source>
        <translation>DPO का β: मॉडल संदर्भ से कितना दूर जा सकता है। ORPO का λ: चुने गए उत्तर की हानि के साथ पसंद वाले पद का भार।</translation>
    </message>
    <message>
        <source>Preference strength (β, λ)</source>
        <translation>पसंद की शक्ति (β, λ)</translation>
    </message>
    <message>
        <source>The layers that get adapters. Checked at first: those the model&apos;s family adapts by default.</source>
        <translation>वे लेयर जिन्हें एडेप्टर मिलते हैं। शुरू में चुनी हुई: वे जिन्हें मॉडल का परिवार डिफ़ॉल्ट रूप से अनुकूलित करता है।</translation>
    </message>
    <message>
        <source>Adapted layers</source>
        <translation>अनुकूलित लेयर</translation>
    </message>
    <message>
        <source>Preview…</source>
        <translation>पूर्वावलोकन…</translation>
    </message>
    <message>
        <source>The first conversations as the model will read them, the tokens that train, the lengths against the context, and any line that cannot be read.</source>
        <translation>पहली बातचीत जैसी मॉडल उन्हें पढ़ेगा, ट्रेन होने वाले टोकन, संदर्भ की तुलना में लंबाइयाँ, और हर वह पंक्ति जो पढ़ी नहीं जा सकती।</translation>
    </message>
    <message>
        <source>From the Hub…</source>
        <translation>Hub से…</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub and download a model, or choose one already downloaded</source>
        <translation>Hugging Face Hub में खोजकर मॉडल डाउनलोड करें, या पहले से डाउनलोड किया हुआ चुनें</translation>
    </message>
    <message>
        <source>optional: how History will name this run</source>
        <translation>वैकल्पिक: इतिहास में इस रन का नाम</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>नाम</translation>
    </message>
    <message>
        <source>Split the weights and the optimizer across the machines</source>
        <translation>भार और ऑप्टिमाइज़र को मशीनों में बाँटें</translation>
    </message>
    <message>
        <source>Each machine keeps one range of the fp32 weights, of the optimizer&apos;s state and of the gradients&apos; sum, and steps it itself: a full fine-tune can then need more memory than any one machine has. For synchronous and local SGD runs that train every weight, on more than one machine.</source>
        <translation>हर मशीन fp32 भार, ऑप्टिमाइज़र की स्थिति और ग्रेडिएंट के योग की एक श्रेणी रखती है और उसका स्टेप ख़ुद करती है: तब पूरी फ़ाइन-ट्यूनिंग को किसी एक मशीन से ज़्यादा मेमोरी चाहिए हो सकती है। उन सिंक्रोनस और लोकल SGD रन के लिए जो हर भार को प्रशिक्षित करते हैं, एक से ज़्यादा मशीनों पर।</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SettingsDialog</name>
    <message>
        <source>Choose…</source>
        <translation>चुनें…</translation>
    </message>
    <message>
        <source>Choose a folder</source>
        <translation>फ़ोल्डर चुनें</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>सेटिंग्स</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>सिस्टम की भाषा</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>भाषा</translation>
    </message>
    <message>
        <source>this computer&apos;s host name</source>
        <translation>इस कंप्यूटर का होस्ट नाम</translation>
    </message>
    <message>
        <source>Machine name</source>
        <translation>मशीन का नाम</translation>
    </message>
    <message>
        <source>Discovery port (UDP)</source>
        <translation>खोज पोर्ट (UDP)</translation>
    </message>
    <message>
        <source>Pairing port (TCP)</source>
        <translation>पेयरिंग पोर्ट (TCP)</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>कोई भी खाली पोर्ट</translation>
    </message>
    <message>
        <source>Training port (TCP)</source>
        <translation>ट्रेनिंग पोर्ट (TCP)</translation>
    </message>
    <message>
        <source>Runs folder</source>
        <translation>रन फ़ोल्डर</translation>
    </message>
    <message>
        <source>Dataset cache</source>
        <translation>डेटासेट कैश</translation>
    </message>
    <message>
        <source>none: base models are received</source>
        <translation>कोई नहीं: बेस मॉडल प्राप्त किए जाते हैं</translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation>मॉडल फ़ोल्डर</translation>
    </message>
    <message>
        <source>Train for paired machines while this one is idle</source>
        <translation>यह मशीन खाली हो तो पेयर की गई मशीनों के लिए ट्रेन करें</translation>
    </message>
    <message>
        <source>A new language or new ports take effect when Tandem starts again.</source>
        <translation>नई भाषा या नए पोर्ट Tandem के अगली बार शुरू होने पर लागू होंगे।</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>सहेजें</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>रद्द करें</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SetupWizard</name>
    <message>
        <source>This machine</source>
        <translation>यह मशीन</translation>
    </message>
    <message>
        <source>Tandem trains on every device listed here. Other machines will see this machine under its name.</source>
        <translation>Tandem यहाँ दिए गए हर डिवाइस पर ट्रेन करता है। दूसरी मशीनें इस मशीन को इसके नाम से देखेंगी।</translation>
    </message>
    <message>
        <source>Devices:</source>
        <translation>डिवाइस:</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>नाम:</translation>
    </message>
    <message>
        <source>Device ID: %1</source>
        <translation>डिवाइस ID: %1</translation>
    </message>
    <message>
        <source>Find your other machine</source>
        <translation>अपनी दूसरी मशीन खोजें</translation>
    </message>
    <message>
        <source>Start Tandem on the other machine too. Machines on this network appear below; choose one and press Next.</source>
        <translation>दूसरी मशीन पर भी Tandem शुरू करें। इस नेटवर्क की मशीनें नीचे दिखेंगी; एक चुनें और आगे दबाएँ।</translation>
    </message>
    <message>
        <source>IP address or host name</source>
        <translation>IP पता या होस्ट नाम</translation>
    </message>
    <message>
        <source>Add by address</source>
        <translation>पते से जोड़ें</translation>
    </message>
    <message>
        <source>Nothing yet? Check that Tandem runs on the other machine and that both are on the same network. Firewalls must allow UDP port 47300 and TCP port 47301. On a Mac, allow Tandem under System Settings → Privacy &amp; Security → Local Network. Some Wi-Fi networks block discovery: then add the other machine by its address.</source>
        <translation>अभी तक कुछ नहीं? जाँचें कि दूसरी मशीन पर Tandem चल रहा है और दोनों एक ही नेटवर्क पर हैं। फ़ायरवॉल को UDP पोर्ट 47300 और TCP पोर्ट 47301 की अनुमति देनी चाहिए। Mac पर, System Settings → Privacy &amp; Security → Local Network में Tandem को अनुमति दें। कुछ Wi-Fi नेटवर्क खोज को रोकते हैं: तब दूसरी मशीन को उसके पते से जोड़ें।</translation>
    </message>
    <message>
        <source>To train on this machine alone, press Next without choosing a machine.</source>
        <translation>सिर्फ़ इसी मशीन पर ट्रेन करने के लिए, कोई मशीन चुने बिना आगे दबाएँ।</translation>
    </message>
    <message>
        <source>Pair</source>
        <translation>पेयर करें</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>कोड मेल खाते हैं</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>कोड अलग हैं</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>फिर से कोशिश करें</translation>
    </message>
    <message>
        <source>Check that %1 shows the same code:</source>
        <translation>जाँचें कि %1 वही कोड दिखा रही है:</translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>%1 से जुड़ रहे हैं…</translation>
    </message>
    <message>
        <source>Waiting for the other machine to confirm…</source>
        <translation>दूसरी मशीन की पुष्टि का इंतज़ार…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>रद्द हो रहा है…</translation>
    </message>
    <message>
        <source>Paired with %1.</source>
        <translation>%1 के साथ पेयर हो गया।</translation>
    </message>
    <message>
        <source>Press Next.</source>
        <translation>आगे दबाएँ।</translation>
    </message>
    <message>
        <source>Nobody answered in time.</source>
        <translation>समय पर किसी ने जवाब नहीं दिया।</translation>
    </message>
    <message>
        <source>Press Try again, and confirm the code on both machines within a minute.</source>
        <translation>फिर से कोशिश करें दबाएँ, और एक मिनट के अंदर दोनों मशीनों पर कोड की पुष्टि करें।</translation>
    </message>
    <message>
        <source>You said the codes differ. Nothing was paired.</source>
        <translation>आपने कहा कि कोड अलग हैं। कुछ भी पेयर नहीं हुआ।</translation>
    </message>
    <message>
        <source>The other machine said the codes differ. Nothing was paired.</source>
        <translation>दूसरी मशीन ने कहा कि कोड अलग हैं। कुछ भी पेयर नहीं हुआ।</translation>
    </message>
    <message>
        <source>Codes that differ can mean that another device is answering in place of your machine. Check that you chose the right machine, then try again.</source>
        <translation>अलग कोड का मतलब हो सकता है कि आपकी मशीन की जगह कोई और डिवाइस जवाब दे रहा है। जाँचें कि आपने सही मशीन चुनी है, फिर दोबारा कोशिश करें।</translation>
    </message>
    <message>
        <source>The other machine refused.</source>
        <translation>दूसरी मशीन ने मना कर दिया।</translation>
    </message>
    <message>
        <source>It may be busy or have refused several attempts: wait a minute and try again.</source>
        <translation>वह शायद व्यस्त है या उसने कई कोशिशें ठुकरा दी हैं: एक मिनट रुककर फिर कोशिश करें।</translation>
    </message>
    <message>
        <source>Could not reach the other machine.</source>
        <translation>दूसरी मशीन तक नहीं पहुँच सके।</translation>
    </message>
    <message>
        <source>Check that Tandem is running there and that its firewall allows TCP port 47301.</source>
        <translation>जाँचें कि वहाँ Tandem चल रहा है और उसका फ़ायरवॉल TCP पोर्ट 47301 की अनुमति देता है।</translation>
    </message>
    <message>
        <source>Pairing failed.</source>
        <translation>पेयरिंग विफल।</translation>
    </message>
    <message>
        <source>Try again. If this repeats, see Troubleshooting in the user guide.</source>
        <translation>फिर से कोशिश करें। अगर ऐसा दोबारा हो, तो उपयोगकर्ता गाइड में समस्या निवारण देखें।</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>हो गया</translation>
    </message>
    <message>
        <source>%1 and %2 are paired. They find each other on this network from now on; Tandem shares the training between them.</source>
        <translation>%1 और %2 पेयर हो गई हैं। अब से वे इस नेटवर्क पर एक-दूसरे को ढूँढ लेंगी; Tandem ट्रेनिंग को दोनों में बाँटता है।</translation>
    </message>
    <message>
        <source>%1 is ready to train on its own. You can pair another machine at any time from Machines → Set up pairing.</source>
        <translation>%1 अकेले ट्रेन करने के लिए तैयार है। आप कभी भी मशीनें → पेयरिंग सेट करें से दूसरी मशीन पेयर कर सकते हैं।</translation>
    </message>
    <message>
        <source>Press Finish to open the dashboard. Its New run tab is set up for the demo (mnist-cnn on Fashion-MNIST): press Start.</source>
        <translation>डैशबोर्ड खोलने के लिए समाप्त दबाएँ। उसका नया रन टैब डेमो के लिए सेट है (Fashion-MNIST पर mnist-cnn): शुरू करें दबाएँ।</translation>
    </message>
    <message>
        <source>Set up Tandem</source>
        <translation>Tandem सेट करें</translation>
    </message>
    <message>
        <source>Finish</source>
        <translation>समाप्त</translation>
    </message>
    <message>
        <source>&lt; &amp;Back</source>
        <translation>&lt; &amp;पीछे</translation>
    </message>
    <message>
        <source>&amp;Next &gt;</source>
        <translation>&amp;आगे &gt;</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>रद्द करें</translation>
    </message>
    <message>
        <source>Both machines show a code. When the codes are the same, no other device sits between the two.</source>
        <translation>दोनों मशीनें एक कोड दिखाती हैं। कोड एक जैसे हों तो दोनों के बीच कोई और डिवाइस नहीं है।</translation>
    </message>
    <message>
        <source>What was set up, and what comes next.</source>
        <translation>क्या सेट हुआ, और आगे क्या है।</translation>
    </message>
    <message>
        <source>%1 and %2 are paired: %2 asked, and you confirmed the code here.</source>
        <translation>%1 और %2 जोड़ी बन गए: %2 ने पूछा, और आपने यहाँ कोड की पुष्टि की।</translation>
    </message>
    <message>
        <source>Runs started on %1 can now use this machine&apos;s devices. Keep Tandem open here: the dashboard shows the run while this machine takes part, with Stop lending to leave it. You can also start runs from here.</source>
        <translation>%1 पर शुरू किए गए रन अब इस मशीन के डिवाइस इस्तेमाल कर सकते हैं। Tandem यहाँ खुला रखें: जब तक यह मशीन भाग लेती है, डैशबोर्ड रन दिखाता है, और &quot;देना बंद करें&quot; से आप बाहर निकल सकते हैं। आप यहाँ से भी रन शुरू कर सकते हैं।</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SweepTab</name>
    <message>
        <source>A sweep description (JSON): a run with a &quot;sweep&quot; object</source>
        <translation>स्वीप का विवरण (JSON): &quot;sweep&quot; ऑब्जेक्ट वाला एक रन</translation>
    </message>
    <message>
        <source>Open…</source>
        <translation>खोलें…</translation>
    </message>
    <message>
        <source>Where the trials&apos; run folders and sweep.jsonl go</source>
        <translation>ट्रायल के रन फ़ोल्डर और sweep.jsonl कहाँ सहेजे जाएँ</translation>
    </message>
    <message>
        <source>Paired machines run trials too</source>
        <translation>पेयर की गई मशीनें भी ट्रायल चलाएँ</translation>
    </message>
    <message>
        <source>Start sweep</source>
        <translation>स्वीप शुरू करें</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>जारी रखें</translation>
    </message>
    <message>
        <source>Continue the sweep in this folder: finished trials are kept, interrupted ones resume from their checkpoints</source>
        <translation>इस फ़ोल्डर का स्वीप जारी रखें: पूरे हुए ट्रायल रखे जाते हैं, बीच में रुके ट्रायल अपने चेकपॉइंट से आगे चलते हैं</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>बंद करें</translation>
    </message>
    <message>
        <source>Export best…</source>
        <translation>सबसे अच्छा निर्यात करें…</translation>
    </message>
    <message>
        <source>Open a sweep file to start.</source>
        <translation>शुरू करने के लिए स्वीप फ़ाइल खोलें।</translation>
    </message>
    <message>
        <source>Trial</source>
        <translation>ट्रायल</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>पैरामीटर</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>डिवाइस</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>स्थिति</translation>
    </message>
    <message>
        <source>Sweep file</source>
        <translation>स्वीप फ़ाइल</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>फ़ोल्डर</translation>
    </message>
    <message>
        <source>Parameter</source>
        <translation>पैरामीटर</translation>
    </message>
    <message>
        <source>Open a sweep description</source>
        <translation>स्वीप विवरण खोलें</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>This sweep file cannot be used: %1</source>
        <translation>यह स्वीप फ़ाइल काम में नहीं ली जा सकती: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n trial(s), %1, searching %2. Results go to the folder above.</source>
        <translation>
            <numerusform>%n ट्रायल, %1, %2 की खोज। नतीजे ऊपर के फ़ोल्डर में जाएँगे।</numerusform>
            <numerusform>%n ट्रायल, %1, %2 की खोज। नतीजे ऊपर के फ़ोल्डर में जाएँगे।</numerusform>
        </translation>
    </message>
    <message>
        <source>That folder already holds a sweep: press Continue to go on with it, or choose another folder.</source>
        <translation>उस फ़ोल्डर में पहले से एक स्वीप है: उसे आगे चलाने के लिए &quot;जारी रखें&quot; दबाएँ, या कोई दूसरा फ़ोल्डर चुनें।</translation>
    </message>
    <message>
        <source>Cannot continue: %1</source>
        <translation>जारी नहीं रख सकते: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>%n एपॉक</numerusform>
            <numerusform>%n एपॉक</numerusform>
        </translation>
    </message>
    <message>
        <source>test loss</source>
        <translation>टेस्ट लॉस</translation>
    </message>
    <message>
        <source>test accuracy</source>
        <translation>टेस्ट सटीकता</translation>
    </message>
    <message>
        <source>Every trial</source>
        <translation>सभी ट्रायल</translation>
    </message>
    <message>
        <source>step</source>
        <translation>स्टेप</translation>
    </message>
    <message>
        <source>The sweep did not start: %1</source>
        <translation>स्वीप शुरू नहीं हुआ: %1</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>कतार में</translation>
    </message>
    <message>
        <source>running</source>
        <translation>चल रहा है</translation>
    </message>
    <message>
        <source>waiting for promotion</source>
        <translation>प्रमोशन का इंतज़ार</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>पूरा हुआ</translation>
    </message>
    <message>
        <source>stopped early</source>
        <translation>जल्दी रोका गया</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>विफल</translation>
    </message>
    <message>
        <source>trial %1</source>
        <translation>ट्रायल %1</translation>
    </message>
    <message>
        <source>%1 (log10)</source>
        <translation>%1 (log10)</translation>
    </message>
    <message>
        <source>%1 against %2</source>
        <translation>%2 के हिसाब से %1</translation>
    </message>
    <message>
        <source>trials</source>
        <translation>ट्रायल</translation>
    </message>
    <message>
        <source>best</source>
        <translation>सबसे अच्छा</translation>
    </message>
    <message numerus="yes">
        <source>Finished: %n trial(s) in %1 s.</source>
        <translation>
            <numerusform>पूरा हुआ: %1 सेकंड में %n ट्रायल।</numerusform>
            <numerusform>पूरा हुआ: %1 सेकंड में %n ट्रायल।</numerusform>
        </translation>
    </message>
    <message>
        <source>Stopped; Continue resumes it from the checkpoints.</source>
        <translation>रोका गया; &quot;जारी रखें&quot; इसे चेकपॉइंट से आगे चलाएगा।</translation>
    </message>
    <message>
        <source>Best: trial %1 (%2), %3.</source>
        <translation>सबसे अच्छा: ट्रायल %1 (%2), %3।</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n trial(s) started; running: %2; devices: %3.</source>
        <translation>
            <numerusform>%n में से %1 ट्रायल शुरू; चल रहे: %2; डिवाइस: %3।</numerusform>
            <numerusform>%n में से %1 ट्रायल शुरू; चल रहे: %2; डिवाइस: %3।</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::TryDialog</name>
    <message>
        <source> tokens</source>
        <translation> टोकन</translation>
    </message>
    <message>
        <source>Only the likeliest tokens that together make up this much probability are drawn from.</source>
        <translation>केवल उन सबसे संभावित टोकनों में से चुना जाता है जिनकी कुल संभावना इतनी हो।</translation>
    </message>
    <message>
        <source>Tuned</source>
        <translation>ट्यून किया गया</translation>
    </message>
    <message>
        <source>Reference: the model before tuning</source>
        <translation>संदर्भ: ट्यूनिंग से पहले का मॉडल</translation>
    </message>
    <message>
        <source>Answer as in a chat</source>
        <translation>चैट की तरह जवाब दें</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>रोकें</translation>
    </message>
    <message>
        <source>Try %1</source>
        <translation>%1 आज़माएँ</translation>
    </message>
    <message>
        <source> bytes</source>
        <translation> बाइट</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>लंबाई</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>तापमान</translation>
    </message>
    <message>
        <source>Could not generate: %1</source>
        <translation>नहीं बना सका: %1</translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation>बनाया जा रहा है…</translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), %1 tokens/s</source>
        <translation>
            <numerusform>%n टोकन, %1 टोकन/से</numerusform>
            <numerusform>%n टोकन, %1 टोकन/से</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not generate.</source>
        <translation>बनाया नहीं जा सका।</translation>
    </message>
    <message>
        <source>Stopped: %1.</source>
        <translation>रोका गया: %1।</translation>
    </message>
    <message>
        <source>Done: %1.</source>
        <translation>पूरा: %1।</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>भेजें</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>फिर से बनाएँ</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>नई चैट</translation>
    </message>
    <message>
        <source>A message for the model, or text to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>मॉडल के लिए संदेश, या आगे बढ़ाने के लिए टेक्स्ट। Enter भेजता है; Shift+Enter नई पंक्ति शुरू करता है।</translation>
    </message>
    <message>
        <source>Text for the model to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>मॉडल के आगे बढ़ाने के लिए टेक्स्ट। Enter भेजता है; Shift+Enter नई पंक्ति शुरू करता है।</translation>
    </message>
    <message>
        <source>Optional: how the model should answer</source>
        <translation>वैकल्पिक: मॉडल को कैसे जवाब देना चाहिए</translation>
    </message>
    <message>
        <source>Writes your messages with the model&apos;s chat template and shows the assistant&apos;s answers; off, the model continues your text.</source>
        <translation>आपके संदेश मॉडल के चैट टेम्पलेट से लिखता है और असिस्टेंट के जवाब दिखाता है; बंद होने पर मॉडल आपका टेक्स्ट आगे बढ़ाता है।</translation>
    </message>
    <message>
        <source>0 always takes the likeliest next token; higher values vary more.</source>
        <translation>0 हमेशा सबसे संभावित अगला टोकन लेता है; ऊँचे मान ज़्यादा बदलते हैं।</translation>
    </message>
    <message>
        <source>System</source>
        <translation>सिस्टम</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>आप: %1</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>बंद करें</translation>
    </message>
</context>
</TS>
