<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ar">
<context>
    <name>Format</name>
    <message>
        <source>GPU %1 (CUDA): %2, %3</source>
        <translation>وحدة GPU %1 (CUDA): %2، %3</translation>
    </message>
    <message>
        <source>Apple GPU (MPS): %1, %2 shared memory</source>
        <translation>وحدة Apple GPU (MPS): %1، ذاكرة مشتركة %2</translation>
    </message>
    <message numerus="yes">
        <source>CPU: %1, %n core(s), %2 RAM</source>
        <translation>
            <numerusform>المعالج: %1، %n نواة، ذاكرة %2</numerusform>
            <numerusform>المعالج: %1، نواة واحدة (%n)، ذاكرة %2</numerusform>
            <numerusform>المعالج: %1، نواتان (%n)، ذاكرة %2</numerusform>
            <numerusform>المعالج: %1، %n أنوية، ذاكرة %2</numerusform>
            <numerusform>المعالج: %1، %n نواة، ذاكرة %2</numerusform>
            <numerusform>المعالج: %1، %n نواة، ذاكرة %2</numerusform>
        </translation>
    </message>
    <message>
        <source>unknown model</source>
        <translation>طراز غير معروف</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>الدقة (%)</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>الحيرة</translation>
    </message>
    <message>
        <source>R²</source>
        <translation>R²</translation>
    </message>
    <message>
        <source>Test loss</source>
        <translation>خسارة الاختبار</translation>
    </message>
    <message>
        <source>not measured yet</source>
        <translation>لم تُقَس بعد</translation>
    </message>
    <message>
        <source>Reward accuracy (%)</source>
        <translation>دقة المكافأة (%)</translation>
    </message>
    <message>
        <source>held-out reward accuracy %1%</source>
        <translation>دقة المكافأة على الأزواج المحجوزة %1%</translation>
    </message>
    <message>
        <source>test accuracy %1%</source>
        <translation>دقة الاختبار %1%</translation>
    </message>
    <message>
        <source>perplexity %1</source>
        <translation>الحيرة %1</translation>
    </message>
    <message>
        <source>R² %1</source>
        <translation>R² %1</translation>
    </message>
    <message>
        <source>test loss %1</source>
        <translation>خسارة الاختبار %1</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 رمز/ث</translation>
    </message>
    <message>
        <source>%1 samples/s</source>
        <translation>%1 عينة/ث</translation>
    </message>
    <message>
        <source>perplexity %1, next-token accuracy %2%</source>
        <translation>الحيرة %1، دقة الرمز التالي %2%</translation>
    </message>
</context>
<context>
    <name>tandem::ui::ChartPanel</name>
    <message>
        <source>this machine</source>
        <translation>هذا الجهاز</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>خسارة التدريب</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>الخطوة</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>الخسارة</translation>
    </message>
    <message>
        <source>Loss per step</source>
        <translation>الخسارة لكل خطوة</translation>
    </message>
    <message>
        <source>Smoothed</source>
        <translation>منعّمة</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>الدقة</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>الحقبة</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>الدقة (%)</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>الاختبار</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>التدريب</translation>
    </message>
    <message>
        <source>Throughput per worker</source>
        <translation>الإنتاجية لكل عامل</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>عينة/ث</translation>
    </message>
    <message>
        <source>Where each worker&apos;s time goes</source>
        <translation>أين يذهب وقت كل عامل</translation>
    </message>
    <message>
        <source>Seconds</source>
        <translation>ثوانٍ</translation>
    </message>
    <message>
        <source>Compute</source>
        <translation>الحساب</translation>
    </message>
    <message>
        <source>Communicate</source>
        <translation>الاتصال</translation>
    </message>
    <message>
        <source>Wait</source>
        <translation>الانتظار</translation>
    </message>
    <message>
        <source>Reward accuracy</source>
        <translation>دقة المكافأة</translation>
    </message>
    <message>
        <source>Loss, reward margin</source>
        <translation>الخسارة، هامش المكافأة</translation>
    </message>
    <message>
        <source>Reward margin</source>
        <translation>هامش المكافأة</translation>
    </message>
    <message>
        <source>Held-out perplexity</source>
        <translation>الحيرة على البيانات المحجوزة</translation>
    </message>
    <message>
        <source>Held-out R²</source>
        <translation>R² على البيانات المحجوزة</translation>
    </message>
    <message>
        <source>Held-out loss</source>
        <translation>الخسارة على البيانات المحجوزة</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>رموز/ث</translation>
    </message>
</context>
<context>
    <name>tandem::ui::CompareDialog</name>
    <message numerus="yes">
        <source>Compare %n run(s)</source>
        <translation>
            <numerusform>مقارنة %n تدريب</numerusform>
            <numerusform>مقارنة تدريب واحد (%n)</numerusform>
            <numerusform>مقارنة تدريبين (%n)</numerusform>
            <numerusform>مقارنة %n تدريبات</numerusform>
            <numerusform>مقارنة %n تدريبًا</numerusform>
            <numerusform>مقارنة %n تدريب</numerusform>
        </translation>
    </message>
    <message>
        <source>Training loss (smoothed)</source>
        <translation>خسارة التدريب (مُنعّمة)</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>الخطوة</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>الخسارة</translation>
    </message>
    <message>
        <source>Held-out figure per epoch</source>
        <translation>مقياس البيانات المحجوزة لكل حقبة</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>الحقبة</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>السرعة</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>رموز/ث</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>عينة/ث</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>نعم</translation>
    </message>
    <message>
        <source>no</source>
        <translation>لا</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>الاسم</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>البدء</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>النموذج</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>مجموعة البيانات</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>معدل التعلم</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>الجدولة</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>المُحسِّن</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>الحقب</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>الدفعة</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>المحوّلات (LoRA)</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>الوضع</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>الأجهزة</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>الحالة</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>النتيجة</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>المدة</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>ملاحظات</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>إغلاق</translation>
    </message>
    <message>
        <source>Tokens or samples/s</source>
        <translation>رموز أو عينات/ث</translation>
    </message>
</context>
<context>
    <name>tandem::ui::DataPreviewDialog</name>
    <message>
        <source>Reading the data…</source>
        <translation>جارٍ قراءة البيانات…</translation>
    </message>
    <message>
        <source>Preview of the data</source>
        <translation>معاينة البيانات</translation>
    </message>
    <message>
        <source>Tokens per document</source>
        <translation>الرموز لكل مستند</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>المستندات</translation>
    </message>
    <message>
        <source>The data cannot be previewed: %1</source>
        <translation>تتعذّر معاينة البيانات: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n conversation(s)</source>
        <translation>
            <numerusform>لا محادثات (%n)</numerusform>
            <numerusform>محادثة واحدة (%n)</numerusform>
            <numerusform>محادثتان (%n)</numerusform>
            <numerusform>%n محادثات</numerusform>
            <numerusform>%n محادثةً</numerusform>
            <numerusform>%n محادثة</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n document(s)</source>
        <translation>
            <numerusform>لا مستندات (%n)</numerusform>
            <numerusform>مستند واحد (%n)</numerusform>
            <numerusform>مستندان (%n)</numerusform>
            <numerusform>%n مستندات</numerusform>
            <numerusform>%n مستندًا</numerusform>
            <numerusform>%n مستند</numerusform>
        </translation>
    </message>
    <message>
        <source>, %1 tokens</source>
        <translation>، %1 رمزًا</translation>
    </message>
    <message>
        <source>%1 longer than the context of %2 tokens (each is split across windows)</source>
        <translation>%1 أطول من سياق من %2 رمزًا (يُقسَّم كل منها على عدة نوافذ)</translation>
    </message>
    <message>
        <source>%1 cut by a window&apos;s edge</source>
        <translation>%1 تقطعها حافة نافذة</translation>
    </message>
    <message>
        <source>%1 windows of %2 tokens, %3 of them left out for holding nothing to learn</source>
        <translation>%1 نافذة من %2 رمزًا، استُبعد منها %3 لأنها لا تحوي ما يُتعلَّم</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s) cannot be read (listed below); a run stops at the first</source>
        <translation>
            <numerusform>لا أسطر تتعذّر قراءتها (%n)</numerusform>
            <numerusform>سطر واحد (%n) تتعذّر قراءته (مدرج أدناه)؛ يتوقف التدريب عند أولها</numerusform>
            <numerusform>سطران (%n) تتعذّر قراءتهما (مدرجان أدناه)؛ يتوقف التدريب عند أولها</numerusform>
            <numerusform>%n أسطر تتعذّر قراءتها (مدرجة أدناه)؛ يتوقف التدريب عند أولها</numerusform>
            <numerusform>%n سطرًا تتعذّر قراءتها (مدرجة أدناه)؛ يتوقف التدريب عند أولها</numerusform>
            <numerusform>%n سطر تتعذّر قراءتها (مدرجة أدناه)؛ يتوقف التدريب عند أولها</numerusform>
        </translation>
    </message>
    <message>
        <source>Line %1: %2 tokens, %3 trained</source>
        <translation>السطر %1: %2 رمزًا، يُدرَّب منها %3</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>الرموز</translation>
    </message>
    <message>
        <source>The context</source>
        <translation>السياق</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>إغلاق</translation>
    </message>
</context>
<context>
    <name>tandem::ui::HistoryModel</name>
    <message>
        <source>Started</source>
        <translation>البدء</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>النموذج</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>مجموعة البيانات</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>الحالة</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>اكتمل</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>أُوقف</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>فشل</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>قيد التشغيل</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>انقطع</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>النتيجة</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>السرعة</translation>
    </message>
    <message>
        <source>%1&apos;s model</source>
        <translation>نموذج %1</translation>
    </message>
    <message>
        <source>Lending to %1</source>
        <translation>يُعار إلى %1</translation>
    </message>
    <message>
        <source>Lent to %1</source>
        <translation>أُعير إلى %1</translation>
    </message>
    <message numerus="yes">
        <source>this machine: %n sample(s)</source>
        <translation>
            <numerusform>هذا الجهاز: %n عينة</numerusform>
            <numerusform>هذا الجهاز: عينة واحدة (%n)</numerusform>
            <numerusform>هذا الجهاز: عينتان (%n)</numerusform>
            <numerusform>هذا الجهاز: %n عينات</numerusform>
            <numerusform>هذا الجهاز: %n عينة</numerusform>
            <numerusform>هذا الجهاز: %n عينة</numerusform>
        </translation>
    </message>
    <message>
        <source>%1, loss %2</source>
        <translation>%1، الخسارة %2</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>الاسم</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>الإعدادات</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>المدة</translation>
    </message>
    <message>
        <source>lr %1</source>
        <translation>معدل التعلم %1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>لا حقب (%n)</numerusform>
            <numerusform>حقبة واحدة (%n)</numerusform>
            <numerusform>حقبتان (%n)</numerusform>
            <numerusform>%n حقب</numerusform>
            <numerusform>%n حقبةً</numerusform>
            <numerusform>%n حقبة</numerusform>
        </translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation>الدفعة %1</translation>
    </message>
    <message>
        <source>LoRA %1</source>
        <translation>LoRA %1</translation>
    </message>
    <message numerus="yes">
        <source>%n machine(s)</source>
        <translation>
            <numerusform>لا أجهزة (%n)</numerusform>
            <numerusform>جهاز واحد (%n)</numerusform>
            <numerusform>جهازان (%n)</numerusform>
            <numerusform>%n أجهزة</numerusform>
            <numerusform>%n جهازًا</numerusform>
            <numerusform>%n جهاز</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::HubDialog</name>
    <message>
        <source>Get a model</source>
        <translation>الحصول على نموذج</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub: llama, qwen, smollm…</source>
        <translation>ابحث في Hugging Face Hub: ‏llama وqwen وsmollm…</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>بحث</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>النموذج</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>التنزيلات</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>المهمة</translation>
    </message>
    <message>
        <source>Access</source>
        <translation>الوصول</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>تنزيل</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>إيقاف</translation>
    </message>
    <message>
        <source>On the Hugging Face Hub</source>
        <translation>على Hugging Face Hub</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>الحجم</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>المجلد</translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation>استخدام هذا النموذج</translation>
    </message>
    <message>
        <source>On this computer (%1)</source>
        <translation>على هذا الحاسوب (%1)</translation>
    </message>
    <message>
        <source>hf_… from huggingface.co/settings/tokens</source>
        <translation>hf_… من huggingface.co/settings/tokens</translation>
    </message>
    <message>
        <source>Save token</source>
        <translation>حفظ الرمز</translation>
    </message>
    <message>
        <source>Access token</source>
        <translation>رمز الوصول</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>إغلاق</translation>
    </message>
    <message>
        <source>%1 of %2: %3</source>
        <translation>%1 من %2: %3</translation>
    </message>
    <message numerus="yes">
        <source>Downloaded: %n file(s), %1 (%2 were here already). Choose it below and press Use this model.</source>
        <translation>
            <numerusform>تم التنزيل: %n ملف، %1 (%2 كانت هنا من قبل). اختره أدناه واضغط «استخدام هذا النموذج».</numerusform>
            <numerusform>تم التنزيل: ملف واحد (%n)، %1 (%2 كانت هنا من قبل). اختره أدناه واضغط «استخدام هذا النموذج».</numerusform>
            <numerusform>تم التنزيل: ملفان (%n)، %1 (%2 كانت هنا من قبل). اختره أدناه واضغط «استخدام هذا النموذج».</numerusform>
            <numerusform>تم التنزيل: %n ملفات، %1 (%2 كانت هنا من قبل). اختره أدناه واضغط «استخدام هذا النموذج».</numerusform>
            <numerusform>تم التنزيل: %n ملفًا، %1 (%2 كانت هنا من قبل). اختره أدناه واضغط «استخدام هذا النموذج».</numerusform>
            <numerusform>تم التنزيل: %n ملف، %1 (%2 كانت هنا من قبل). اختره أدناه واضغط «استخدام هذا النموذج».</numerusform>
        </translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>جارٍ البحث…</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>مفتوح</translation>
    </message>
    <message>
        <source>Gated: needs a token</source>
        <translation>مقيَّد: يحتاج إلى رمز</translation>
    </message>
    <message>
        <source>No model on the Hub matches.</source>
        <translation>لا يطابق البحثَ أي نموذج على Hub.</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s). Choose one and press Download.</source>
        <translation>
            <numerusform>%n نموذج. اختر واحدًا واضغط «تنزيل».</numerusform>
            <numerusform>نموذج واحد (%n). اختره واضغط «تنزيل».</numerusform>
            <numerusform>نموذجان (%n). اختر واحدًا واضغط «تنزيل».</numerusform>
            <numerusform>%n نماذج. اختر واحدًا واضغط «تنزيل».</numerusform>
            <numerusform>%n نموذجًا. اختر واحدًا واضغط «تنزيل».</numerusform>
            <numerusform>%n نموذج. اختر واحدًا واضغط «تنزيل».</numerusform>
        </translation>
    </message>
    <message>
        <source>Asking the Hub for %1&apos;s files…</source>
        <translation>جارٍ طلب ملفات %1 من Hub…</translation>
    </message>
    <message>
        <source>%1 (incomplete)</source>
        <translation>%1 (غير مكتمل)</translation>
    </message>
    <message>
        <source>No token: open models download without one; gated ones (Llama, Gemma) need one that has accepted their terms.</source>
        <translation>لا رمز: النماذج المفتوحة تُنزَّل بدونه؛ أما المقيَّدة (Llama وGemma) فتحتاج إلى رمز قَبِل صاحبه شروطها.</translation>
    </message>
    <message>
        <source>A token is kept in the system&apos;s keychain.</source>
        <translation>رمزٌ محفوظ في سلسلة مفاتيح النظام.</translation>
    </message>
    <message>
        <source>The token in HF_TOKEN is used.</source>
        <translation>يُستخدم الرمز الموجود في HF_TOKEN.</translation>
    </message>
    <message>
        <source>A token is kept in %1 (readable by you only).</source>
        <translation>رمزٌ محفوظ في %1 (لا يقرؤه غيرك).</translation>
    </message>
</context>
<context>
    <name>tandem::ui::MainWindow</name>
    <message>
        <source>Export for Ollama / llama.cpp…</source>
        <translation>تصدير لـ Ollama / llama.cpp…</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>غير معروف</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, the usual choice</source>
        <translation>Q4_K_M: نحو %1، الاختيار المعتاد</translation>
    </message>
    <message>
        <source>Q8_0: about %1, nearly as trained</source>
        <translation>Q8_0: نحو %1، قريب جدًا مما دُرّب</translation>
    </message>
    <message>
        <source>F16: about %1, as trained</source>
        <translation>F16: نحو %1، كما دُرّب</translation>
    </message>
    <message>
        <source>BF16: about %1, as trained</source>
        <translation>BF16: نحو %1، كما دُرّب</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>تصدير لـ Ollama / llama.cpp</translation>
    </message>
    <message>
        <source>How the weights are stored:</source>
        <translation>كيف تُخزَّن الأوزان:</translation>
    </message>
    <message>
        <source>Export as GGUF</source>
        <translation>تصدير بصيغة GGUF</translation>
    </message>
    <message>
        <source>GGUF (*.gguf)</source>
        <translation>GGUF (*.gguf)</translation>
    </message>
    <message>
        <source>Export Hugging Face folder…</source>
        <translation>تصدير مجلد Hugging Face…</translation>
    </message>
    <message>
        <source>Export adapters (PEFT)…</source>
        <translation>تصدير المحوّلات (PEFT)…</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>إخفاء</translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation>المجموعة</translation>
    </message>
    <message>
        <source>Load…</source>
        <translation>تحميل…</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>حفظ…</translation>
    </message>
    <message>
        <source>Load a run description (JSON, as for tandem train --config)</source>
        <translation>تحميل وصف تدريب (JSON، كما في tandem train --config)</translation>
    </message>
    <message>
        <source>Save this run description as JSON</source>
        <translation>حفظ وصف التدريب هذا بصيغة JSON</translation>
    </message>
    <message>
        <source>New run</source>
        <translation>تدريب جديد</translation>
    </message>
    <message>
        <source>History</source>
        <translation>السجل</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>ابدأ</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>إيقاف مؤقت</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>استئناف</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>إيقاف</translation>
    </message>
    <message>
        <source>Ready. The demo is set up in New run: press Start.</source>
        <translation>جاهز. العرض التوضيحي مُعدّ في تبويب تدريب جديد: اضغط ابدأ.</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>السجل التفصيلي</translation>
    </message>
    <message>
        <source>Paused at step %1. Resume continues where it stopped.</source>
        <translation>متوقف مؤقتًا عند الخطوة %1. الاستئناف يكمل من حيث توقف.</translation>
    </message>
    <message>
        <source>Stopping: saving a checkpoint…</source>
        <translation>جارٍ الإيقاف: حفظ نقطة استعادة…</translation>
    </message>
    <message>
        <source>Training %1 on %2: %3 training samples, %4 steps per epoch</source>
        <translation>تدريب %1 على %2: %3 عينة تدريب، %4 خطوة لكل حقبة</translation>
    </message>
    <message>
        <source>A machine left the run: %1. Its share goes to the others. Check that it is switched on and on this network; it can join again.</source>
        <translation>غادر جهاز التدريب: %1. تذهب حصته إلى الأجهزة الأخرى. تحقق من أنه يعمل ومتصل بهذه الشبكة؛ يمكنه الانضمام مجددًا.</translation>
    </message>
    <message>
        <source>This machine cannot join the network: %1. Another program may use the same ports; change them in Settings.</source>
        <translation>لا يستطيع هذا الجهاز الانضمام إلى الشبكة: %1. ربما يستخدم برنامج آخر المنافذ نفسها؛ غيّرها من الإعدادات.</translation>
    </message>
    <message>
        <source>Paired: %1</source>
        <translation>تم الإقران: %1</translation>
    </message>
    <message>
        <source>This machine is training for %1.</source>
        <translation>يتدرّب هذا الجهاز لصالح %1.</translation>
    </message>
    <message>
        <source>This machine finished its work for %1.</source>
        <translation>أنهى هذا الجهاز عمله لصالح %1.</translation>
    </message>
    <message>
        <source>Show Tandem</source>
        <translation>إظهار Tandem</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>إنهاء</translation>
    </message>
    <message>
        <source>Pair a machine…</source>
        <translation>إقران جهاز…</translation>
    </message>
    <message>
        <source>Unpair</source>
        <translation>إلغاء الإقران</translation>
    </message>
    <message>
        <source>Unpair %1? It can no longer train with this machine until you pair the two again.</source>
        <translation>إلغاء إقران %1؟ لن يتمكن من التدريب مع هذا الجهاز حتى تقرن الجهازين من جديد.</translation>
    </message>
    <message>
        <source>Export TorchScript…</source>
        <translation>تصدير بصيغة TorchScript…</translation>
    </message>
    <message>
        <source>Export safetensors…</source>
        <translation>تصدير بصيغة safetensors…</translation>
    </message>
    <message>
        <source>Resume run</source>
        <translation>استئناف التدريب</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>فتح المجلد</translation>
    </message>
    <message>
        <source>&amp;Tandem</source>
        <translation>&amp;Tandem</translation>
    </message>
    <message>
        <source>&amp;Load run description…</source>
        <translation>&amp;تحميل وصف تدريب…</translation>
    </message>
    <message>
        <source>&amp;Save run description…</source>
        <translation>&amp;حفظ وصف التدريب…</translation>
    </message>
    <message>
        <source>S&amp;ettings…</source>
        <translation>الإ&amp;عدادات…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>إ&amp;نهاء</translation>
    </message>
    <message>
        <source>&amp;Machines</source>
        <translation>الأ&amp;جهزة</translation>
    </message>
    <message>
        <source>Set up &amp;pairing…</source>
        <translation>إعداد الإ&amp;قران…</translation>
    </message>
    <message>
        <source>&amp;Add a machine by address…</source>
        <translation>إ&amp;ضافة جهاز بعنوانه…</translation>
    </message>
    <message>
        <source>Add a machine</source>
        <translation>إضافة جهاز</translation>
    </message>
    <message>
        <source>IP address or host name of the machine:</source>
        <translation>عنوان IP للجهاز أو اسم المضيف:</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>م&amp;ساعدة</translation>
    </message>
    <message>
        <source>User &amp;guide</source>
        <translation>د&amp;ليل المستخدم</translation>
    </message>
    <message>
        <source>&amp;About Tandem</source>
        <translation>&amp;حول Tandem</translation>
    </message>
    <message>
        <source>About Tandem</source>
        <translation>حول Tandem</translation>
    </message>
    <message>
        <source>Tandem %1
Trains one PyTorch model across your own machines.
Protocol version %2.</source>
        <translation>Tandem %1
يدرّب نموذج PyTorch واحدًا على أجهزتك الخاصة.
إصدار البروتوكول %2.</translation>
    </message>
    <message>
        <source>A device ran out of memory (%1). Lower the batch size or leave that machine out, then start again.</source>
        <translation>نفدت ذاكرة أحد الأجهزة (%1). قلّل حجم الدفعة أو استبعد ذلك الجهاز، ثم ابدأ من جديد.</translation>
    </message>
    <message>
        <source>The dataset cannot be used: %1. Check the folder or file and its format (the user guide lists the formats).</source>
        <translation>لا يمكن استخدام مجموعة البيانات: %1. تحقق من المجلد أو الملف وصيغته (يسرد دليل المستخدم الصيغ المدعومة).</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. Save it with torch.jit.save after torch.jit.script, and check that it returns class scores.</source>
        <translation>لا يمكن استخدام النموذج: %1. احفظه باستخدام torch.jit.save بعد torch.jit.script، وتحقق من أنه يُرجع درجات الفئات.</translation>
    </message>
    <message>
        <source>A machine could not join: %1.</source>
        <translation>تعذّر انضمام جهاز: %1.</translation>
    </message>
    <message>
        <source>The run stopped with an error: %1</source>
        <translation>توقف التدريب بسبب خطأ: %1</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>جارٍ فحص النموذج ومجموعة البيانات…</translation>
    </message>
    <message>
        <source>No machine is chosen to train. Tick at least one machine under New run → Machines.</source>
        <translation>لم يُختر أي جهاز للتدريب. حدّد جهازًا واحدًا على الأقل في تدريب جديد ← الأجهزة.</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>جارٍ البدء…</translation>
    </message>
    <message numerus="yes">
        <source>Starting; inviting %n machine(s)…</source>
        <translation>
            <numerusform>جارٍ البدء؛ لا توجد أجهزة للدعوة (%n)…</numerusform>
            <numerusform>جارٍ البدء؛ دعوة جهاز واحد (%n)…</numerusform>
            <numerusform>جارٍ البدء؛ دعوة جهازين (%n)…</numerusform>
            <numerusform>جارٍ البدء؛ دعوة %n أجهزة…</numerusform>
            <numerusform>جارٍ البدء؛ دعوة %n جهازًا…</numerusform>
            <numerusform>جارٍ البدء؛ دعوة %n جهاز…</numerusform>
        </translation>
    </message>
    <message>
        <source>Run folder: %1</source>
        <translation>مجلد التدريب: %1</translation>
    </message>
    <message>
        <source>That run finished or has no checkpoint; start a new run instead.</source>
        <translation>ذلك التدريب اكتمل أو ليست له نقطة استعادة؛ ابدأ تدريبًا جديدًا بدلًا منه.</translation>
    </message>
    <message>
        <source>Cannot resume: %1</source>
        <translation>تعذّر الاستئناف: %1</translation>
    </message>
    <message>
        <source>Stopped at step %1; a checkpoint is saved.</source>
        <translation>أُوقف عند الخطوة %1؛ حُفظت نقطة استعادة.</translation>
    </message>
    <message>
        <source>The run stopped at step %1. Resume it from History.</source>
        <translation>توقف التدريب عند الخطوة %1. استأنفه من السجل.</translation>
    </message>
    <message>
        <source>The run failed.</source>
        <translation>فشل التدريب.</translation>
    </message>
    <message>
        <source>Choose a run in History first.</source>
        <translation>اختر تدريبًا من السجل أولًا.</translation>
    </message>
    <message>
        <source>Export as TorchScript</source>
        <translation>تصدير بصيغة TorchScript</translation>
    </message>
    <message>
        <source>Export as safetensors</source>
        <translation>تصدير بصيغة safetensors</translation>
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
        <translation>ليست لذلك التدريب نقطة استعادة للتصدير.</translation>
    </message>
    <message>
        <source>Exported to %1. In Python: %2</source>
        <translation>صُدّر إلى %1. في Python: %2</translation>
    </message>
    <message>
        <source>The export failed: %1</source>
        <translation>فشل التصدير: %1</translation>
    </message>
    <message>
        <source>Pair with %1?</source>
        <translation>الإقران مع %1؟</translation>
    </message>
    <message>
        <source>%1 (%2) wants to pair with this machine.

Does it show this code?

%3 %4</source>
        <translation>يريد %1 (%2) الإقران مع هذا الجهاز.

هل يعرض هذا الرمز؟

%3 %4</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>الرمزان متطابقان</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>الرمزان مختلفان</translation>
    </message>
    <message>
        <source>Save run description</source>
        <translation>حفظ وصف التدريب</translation>
    </message>
    <message>
        <source>Run description (*.json)</source>
        <translation>وصف التدريب (*.json)</translation>
    </message>
    <message>
        <source>Saved the run description to %1; train it with: tandem train --config %1</source>
        <translation>حُفظ وصف التدريب في %1؛ للتدريب به: tandem train --config %1</translation>
    </message>
    <message>
        <source>Load run description</source>
        <translation>تحميل وصف تدريب</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>يتدرّب</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>متوقف مؤقتًا</translation>
    </message>
    <message>
        <source>Stopping</source>
        <translation>جارٍ الإيقاف</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>خامل</translation>
    </message>
    <message>
        <source>Quit Tandem</source>
        <translation>إنهاء Tandem</translation>
    </message>
    <message>
        <source>A run is in progress. Stop it (a checkpoint is saved, so it can be resumed) and quit?</source>
        <translation>يجري تدريب الآن. أتريد إيقافه (تُحفظ نقطة استعادة ليُستأنف لاحقًا) والإنهاء؟</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>إضافة</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>إلغاء</translation>
    </message>
    <message>
        <source>Stop and quit</source>
        <translation>إيقاف وإنهاء</translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation>المسح</translation>
    </message>
    <message>
        <source>TorchScript (*.pt);;safetensors (*.safetensors)</source>
        <translation>TorchScript (*.pt);;safetensors (*.safetensors)</translation>
    </message>
    <message>
        <source>Try it…</source>
        <translation>جرّبه…</translation>
    </message>
    <message>
        <source>Let a language model continue a prompt of yours.</source>
        <translation>دع نموذج اللغة يكمل نصًا تكتبه.</translation>
    </message>
    <message>
        <source>Epoch %1: %2, test loss %3</source>
        <translation>الحقبة %1: %2، خسارة الاختبار %3</translation>
    </message>
    <message>
        <source>The run finished: %1. Export the model from History.</source>
        <translation>انتهى التشغيل: %1. صدّر النموذج من السجل.</translation>
    </message>
    <message>
        <source>Pausing after the step in progress…</source>
        <translation>يتوقف مؤقتًا بعد الخطوة الجارية…</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 done · evaluating on %3 test samples… %4 %</source>
        <translation>اكتملت الحقبة %1 من %2 · التقييم على %3 من عينات الاختبار… %4 %</translation>
    </message>
    <message>
        <source>device %1</source>
        <translation>الجهاز %1</translation>
    </message>
    <message>
        <source>Device ID: %1
Address: %2</source>
        <translation>معرّف الجهاز: %1
العنوان: %2</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>تصدير</translation>
    </message>
    <message>
        <source>Stop lending</source>
        <translation>إيقاف الإعارة</translation>
    </message>
    <message>
        <source>End this machine&apos;s part in the other machine&apos;s run; the run goes on without it.</source>
        <translation>ينهي دور هذا الجهاز في تدريب الجهاز الآخر؛ ويستمر التدريب من دونه.</translation>
    </message>
    <message>
        <source>This machine is %1 (device %2), listening on port %3</source>
        <translation>هذا الجهاز هو %1 (الجهاز %2)، ويستمع على المنفذ %3</translation>
    </message>
    <message>
        <source>Training for %1</source>
        <translation>يدرّب لصالح %1</translation>
    </message>
    <message>
        <source>This machine finished its work for %1. The charts show its part of that run.</source>
        <translation>أنهى هذا الجهاز عمله لصالح %1. تعرض المخططات نصيبه من ذلك التدريب.</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1</source>
        <translation>هذا الجهاز مُعار لتدريب %1</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1 (device %2)</source>
        <translation>هذا الجهاز مُعار لتدريب %1 (الجهاز %2)</translation>
    </message>
    <message>
        <source>%1: receiving the model and the data…</source>
        <translation>%1: يجري استلام النموذج والبيانات…</translation>
    </message>
    <message>
        <source>%1: %2 paused the run; this machine waits.</source>
        <translation>%1: أوقف %2 التدريب مؤقتًا؛ هذا الجهاز ينتظر.</translation>
    </message>
    <message>
        <source>%1 on %2: waiting for the first step…</source>
        <translation>%1 على %2: بانتظار الخطوة الأولى…</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>الخطوة %1</translation>
    </message>
    <message>
        <source>this machine&apos;s share %1 %</source>
        <translation>نصيب هذا الجهاز %1 %</translation>
    </message>
    <message>
        <source>loss %1</source>
        <translation>الخسارة %1</translation>
    </message>
    <message>
        <source>%1 on %2</source>
        <translation>%1 على %2</translation>
    </message>
    <message>
        <source>This machine is lending its device to another run: press Stop lending first.</source>
        <translation>هذا الجهاز يعير جهازه لتدريب آخر: اضغط أولًا على «إيقاف الإعارة».</translation>
    </message>
    <message>
        <source>Mode: %1</source>
        <translation>الوضع: %1</translation>
    </message>
    <message>
        <source>The model cannot be used: %1.</source>
        <translation>لا يمكن استخدام النموذج: %1.</translation>
    </message>
    <message>
        <source>Export the Hugging Face folder as</source>
        <translation>تصدير مجلد Hugging Face باسم</translation>
    </message>
    <message>
        <source>Export the adapters as</source>
        <translation>تصدير المحوِّلات باسم</translation>
    </message>
    <message>
        <source>Resuming…</source>
        <translation>جارٍ الاستئناف…</translation>
    </message>
    <message>
        <source>Ready: press Start to train with these settings.</source>
        <translation>جاهز: اضغط «ابدأ» للتدريب بهذه الإعدادات.</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 · step %3 of %4 · elapsed %5 · about %6 left · %7 · loss %8</source>
        <translation>الحقبة %1 من %2 · الخطوة %3 من %4 · مضى %5 · يتبقى نحو %6 · %7 · الخسارة %8</translation>
    </message>
    <message>
        <source>Finished: %1, %2.</source>
        <translation>اكتمل: %1، %2.</translation>
    </message>
    <message>
        <source>This machine lent its device to that run; its model is on the machine that ran it.</source>
        <translation>أعار هذا الجهاز جهازه لذلك التشغيل؛ نموذجه على الجهاز الذي شغّله.</translation>
    </message>
    <message>
        <source>New run like this</source>
        <translation>تدريب جديد مثل هذا</translation>
    </message>
    <message>
        <source>Puts this run&apos;s settings in the New run form.</source>
        <translation>يضع إعدادات هذا التدريب في نموذج «تدريب جديد».</translation>
    </message>
    <message>
        <source>Folder: %1</source>
        <translation>المجلد: %1</translation>
    </message>
    <message>
        <source>No file manager opened the folder. The run&apos;s files are in %1</source>
        <translation>لم يفتح أي مدير ملفات المجلد. ملفات التدريب موجودة في %1</translation>
    </message>
    <message>
        <source>Not started.</source>
        <translation>لم يبدأ.</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. The user guide lists the model families Tandem reads.</source>
        <translation>لا يمكن استخدام النموذج: %1. يسرد دليل المستخدم عائلات النماذج التي يقرؤها Tandem.</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, hardly smaller here: this model&apos;s rows are not whole blocks of 256 values, which 4 bits need, so they are stored at 5 to 8 bits</source>
        <translation>Q4_K_M: نحو %1، وبالكاد أصغر هنا: صفوف هذا النموذج ليست كتلًا كاملة من 256 قيمة كما تحتاج 4 بتات، لذا تُخزَّن بـ 5 إلى 8 بتات</translation>
    </message>
    <message>
        <source>That run&apos;s record has no settings to start from: %1</source>
        <translation>لا يحتوي سجل ذلك التدريب على إعدادات يُبدأ منها: %1</translation>
    </message>
    <message>
        <source>This machine finished its work for %1 before its first step.</source>
        <translation>أنهى هذا الجهاز عمله لـ %1 قبل خطوته الأولى.</translation>
    </message>
    <message>
        <source>%1 stopped lending itself to this run. Its share goes to the others.</source>
        <translation>توقف %1 عن إعارة نفسه لهذا التدريب. تذهب حصته إلى الآخرين.</translation>
    </message>
    <message>
        <source>Notes…</source>
        <translation>ملاحظات…</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>قارن</translation>
    </message>
    <message>
        <source>Choose two or more runs (Ctrl+click) to see their curves and settings side by side.</source>
        <translation>اختر تدريبين أو أكثر (Ctrl+نقر) لترى منحنياتها وإعداداتها جنبًا إلى جنب.</translation>
    </message>
    <message>
        <source>Notes on %1</source>
        <translation>ملاحظات عن %1</translation>
    </message>
    <message>
        <source>What to remember of this run (shown in History and when comparing runs):</source>
        <translation>ما تريد تذكره عن هذا التدريب (يظهر في السجل وعند المقارنة بين التدريبات):</translation>
    </message>
    <message>
        <source>%1 unpaired this machine. To train together again, pair the two (Machines → Set up pairing).</source>
        <translation>ألغى %1 إقران هذا الجهاز. لتتدربا معًا من جديد، أقرن الجهازين (الأجهزة ← إعداد الإقران).</translation>
    </message>
    <message>
        <source>Exported to %1.</source>
        <translation>صُدِّر إلى %1.</translation>
    </message>
    <message>
        <source>Ollama is not installed on this machine; where it is: %1. LM Studio and llama.cpp open the file as it is.</source>
        <translation>Ollama غير مثبّت على هذا الجهاز؛ حيث يكون مثبّتًا: %1. يفتح LM Studio وllama.cpp الملف كما هو.</translation>
    </message>
    <message>
        <source>Added to Ollama as %1: ollama run %1</source>
        <translation>أُضيف إلى Ollama باسم %1: ollama run %1</translation>
    </message>
    <message>
        <source>Ollama could not add it (%1). By hand: %2</source>
        <translation>تعذّر على Ollama إضافته (%1). يدويًا: %2</translation>
    </message>
    <message>
        <source>Adding it to Ollama as %1…</source>
        <translation>جارٍ إضافته إلى Ollama باسم %1…</translation>
    </message>
</context>
<context>
    <name>tandem::ui::PeerModel</name>
    <message>
        <source>Machine</source>
        <translation>الجهاز</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>الحالة</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>الأجهزة الحسابية</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>الدور</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>عينة/ث</translation>
    </message>
    <message>
        <source>Device ID %1
%2
Tandem %3</source>
        <translation>معرّف الجهاز %1
%2
Tandem %3</translation>
    </message>
    <message>
        <source>%1 (this machine)</source>
        <translation>%1 (هذا الجهاز)</translation>
    </message>
    <message>
        <source>Online</source>
        <translation>متصل</translation>
    </message>
    <message>
        <source>Offline</source>
        <translation>غير متصل</translation>
    </message>
    <message>
        <source>Online, paired</source>
        <translation>متصل، مقترن</translation>
    </message>
    <message>
        <source>Online, not paired</source>
        <translation>متصل، غير مقترن</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>خامل</translation>
    </message>
    <message>
        <source>Coordinator</source>
        <translation>المنسّق</translation>
    </message>
    <message>
        <source>Coordinator and worker</source>
        <translation>المنسّق وعامل</translation>
    </message>
    <message>
        <source>Idle: would slow the run (%1 ms a step before its first sample, against a %2 ms step)</source>
        <translation>خامل: سيبطئ التدريب (%1 م.ث لكل خطوة قبل أول عينة، مقابل خطوة من %2 م.ث)</translation>
    </message>
    <message>
        <source>Idle: slowed the run (its steps took %1 ms, against %2 ms without it)</source>
        <translation>خامل: أبطأ التدريب (استغرقت خطواته %1 م.ث، مقابل %2 م.ث من دونه)</translation>
    </message>
    <message>
        <source>The run measures it again after a few dozen steps, then less often while it would still slow the run, and gives it a share again when it would make steps shorter: when its load lifts, its link gets faster, or the batch grows.</source>
        <translation>يقيسه التدريب من جديد بعد بضع عشرات من الخطوات، ثم بوتيرة أقل ما دام سيبطئ التدريب، ويعطيه حصة مرة أخرى حين يجعل الخطوات أقصر: حين يخف الحمل عليه، أو يصبح اتصاله أسرع، أو تكبر الدفعة.</translation>
    </message>
    <message>
        <source>Worker</source>
        <translation>عامل</translation>
    </message>
    <message>
        <source>Online, but its Tandem %1 cannot work with this one: install the same version on both</source>
        <translation>متصل، لكن إصدار Tandem %1 لديه لا يعمل مع هذا الإصدار: ثبّت الإصدار نفسه على الجهازين</translation>
    </message>
    <message>
        <source>Device ID</source>
        <translation>معرّف الجهاز</translation>
    </message>
    <message>
        <source>This machine&apos;s part of each step&apos;s samples, as the run assigns them: the machine that lends its device shows the same figure</source>
        <translation>حصة هذا الجهاز من عينات كل خطوة كما يوزعها التشغيل: الجهاز الذي يعير جهازه يعرض الرقم نفسه</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>الحصة</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>رموز/ث</translation>
    </message>
    <message>
        <source>In a sharded run: which range of the trainable values this machine owns, what it keeps for it (the fp32 weights, the optimizer&apos;s state and the gradients&apos; sum), and the bytes its links sent and received in the last step</source>
        <translation>في التدريب المجزّأ (--shard): أيّ نطاق من القيم القابلة للتدريب تملكه هذه الآلة، وما تحتفظ به له (أوزان fp32 وحالة المُحسِّن ومجموع التدرجات)، والبايتات التي أرسلتها روابطها واستقبلتها في الخطوة الأخيرة</translation>
    </message>
    <message>
        <source>Shard</source>
        <translation>الجزء</translation>
    </message>
    <message>
        <source>%1 of %2, %3, %4 a step</source>
        <translation>%1 من %2، %3، %4 في كل خطوة</translation>
    </message>
    <message>
        <source>%1 of %2, %3</source>
        <translation>%1 من %2، %3</translation>
    </message>
</context>
<context>
    <name>tandem::ui::RunForm</name>
    <message>
        <source>Text file (bytes, or a Hugging Face model&apos;s tokenizer)</source>
        <translation>ملف نصي (بايتات، أو مُرمِّز نموذج Hugging Face)</translation>
    </message>
    <message>
        <source>JSON Lines of documents (&quot;text&quot; a line; a Hugging Face model)</source>
        <translation>مستندات JSON Lines (حقل &quot;text&quot; في كل سطر؛ نموذج Hugging Face)</translation>
    </message>
    <message>
        <source>Chat conversations (JSON Lines of &quot;messages&quot;; a Hugging Face model)</source>
        <translation>محادثات (JSON Lines من &quot;messages&quot;؛ نموذج Hugging Face)</translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl *.json);;All files (*)</source>
        <translation>JSON Lines (*.jsonl *.json);;كل الملفات (*)</translation>
    </message>
    <message>
        <source>A Hugging Face folder… (%1)</source>
        <translation>مجلد Hugging Face… ‏(%1)</translation>
    </message>
    <message>
        <source>empty: train every weight</source>
        <translation>فارغ: تدريب كل الأوزان</translation>
    </message>
    <message>
        <source>Low-rank adapters: only they train, the model&apos;s own weights stay frozen. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</source>
        <translation>محوّلات منخفضة الرتبة: تُدرَّب وحدها وتبقى أوزان النموذج مجمّدة. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</translation>
    </message>
    <message>
        <source>Recompute activations (less memory, more time)</source>
        <translation>إعادة حساب التنشيطات (ذاكرة أقل، وقت أطول)</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>المحوّلات (LoRA)</translation>
    </message>
    <message>
        <source>a folder with config.json and model.safetensors</source>
        <translation>مجلد فيه config.json و model.safetensors</translation>
    </message>
    <message>
        <source>Choose a Hugging Face model folder</source>
        <translation>اختر مجلد نموذج Hugging Face</translation>
    </message>
    <message>
        <source>Choose the Hugging Face model&apos;s folder.</source>
        <translation>اختر مجلد نموذج Hugging Face.</translation>
    </message>
    <message>
        <source>mnist-cnn: convolutional network for 28×28 images</source>
        <translation>mnist-cnn: شبكة التفافية لصور 28×28</translation>
    </message>
    <message>
        <source>mlp: small fully connected network</source>
        <translation>mlp: شبكة صغيرة متصلة بالكامل</translation>
    </message>
    <message>
        <source>resnet8: small ResNet for 32×32 colour images</source>
        <translation>resnet8: شبكة ResNet صغيرة لصور ملونة 32×32</translation>
    </message>
    <message>
        <source>Your TorchScript file…</source>
        <translation>ملف TorchScript الخاص بك…</translation>
    </message>
    <message>
        <source>model.pt saved with torch.jit.save</source>
        <translation>model.pt محفوظ باستخدام torch.jit.save</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>اختيار…</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>النموذج</translation>
    </message>
    <message>
        <source>Fashion-MNIST (built in)</source>
        <translation>Fashion-MNIST (مدمجة)</translation>
    </message>
    <message>
        <source>Fashion-MNIST folder (IDX files)</source>
        <translation>مجلد Fashion-MNIST (ملفات IDX)</translation>
    </message>
    <message>
        <source>MNIST folder (IDX files)</source>
        <translation>مجلد MNIST (ملفات IDX)</translation>
    </message>
    <message>
        <source>CIFAR-10 folder (binary version)</source>
        <translation>مجلد CIFAR-10 (النسخة الثنائية)</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>مجموعة البيانات</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>الأجهزة</translation>
    </message>
    <message>
        <source>Synchronous: one model, exact (best on a fast network)</source>
        <translation>متزامن: نموذج واحد، دقيق (الأفضل على شبكة سريعة)</translation>
    </message>
    <message>
        <source>Asynchronous: no waiting for the slowest machine</source>
        <translation>غير متزامن: بلا انتظار للجهاز الأبطأ</translation>
    </message>
    <message>
        <source>Local SGD: several local steps per exchange (slow networks)</source>
        <translation>SGD محلي: عدة خطوات محلية لكل تبادل (للشبكات البطيئة)</translation>
    </message>
    <message>
        <source>Automatic: measures the network, then synchronous or streaming</source>
        <translation>تلقائي: يقيس الشبكة، ثم متزامن أو متدفق</translation>
    </message>
    <message>
        <source>Streaming local SGD: exchanges overlap training (Wi-Fi)</source>
        <translation>SGD محلي متدفق: التبادل يتداخل مع التدريب (Wi-Fi)</translation>
    </message>
    <message>
        <source>8-bit blocks (a quarter of the traffic)</source>
        <translation>كتل 8 بت (ربع حركة البيانات)</translation>
    </message>
    <message>
        <source>4-bit blocks (an eighth of the traffic)</source>
        <translation>كتل 4 بت (ثُمن حركة البيانات)</translation>
    </message>
    <message>
        <source>Local SGD updates</source>
        <translation>تحديثات SGD المحلي</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>الوضع</translation>
    </message>
    <message>
        <source>32-bit floats (exact)</source>
        <translation>أعداد عشرية 32 بت (دقيقة)</translation>
    </message>
    <message>
        <source>16-bit floats (half the traffic)</source>
        <translation>أعداد عشرية 16 بت (نصف حركة البيانات)</translation>
    </message>
    <message>
        <source>bfloat16 (half the traffic, wider range)</source>
        <translation>bfloat16 (نصف حركة البيانات، مدى أوسع)</translation>
    </message>
    <message>
        <source>Wire precision</source>
        <translation>دقة النقل</translation>
    </message>
    <message>
        <source>Device on this machine</source>
        <translation>الجهاز على هذه الآلة</translation>
    </message>
    <message>
        <source>Best available: %1</source>
        <translation>الأفضل المتاح: %1</translation>
    </message>
    <message>
        <source>Compute precision</source>
        <translation>دقة الحساب</translation>
    </message>
    <message>
        <source>bfloat16 autocast (faster on recent CPUs and GPUs)</source>
        <translation>‏autocast بصيغة bfloat16 (أسرع على المعالجات ووحدات GPU الحديثة)</translation>
    </message>
    <message>
        <source>16-bit autocast (NVIDIA and Apple GPUs)</source>
        <translation>‏autocast بدقة 16 بت (وحدات GPU من NVIDIA وApple)</translation>
    </message>
    <message>
        <source>SGD with momentum</source>
        <translation>SGD مع الزخم</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>المُحسِّن</translation>
    </message>
    <message>
        <source>constant</source>
        <translation>ثابت</translation>
    </message>
    <message>
        <source>cosine decay</source>
        <translation>تناقص جيبي</translation>
    </message>
    <message>
        <source>warm-up steps: </source>
        <translation>خطوات الإحماء: </translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>معدل التعلم</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>الحقب</translation>
    </message>
    <message>
        <source>Batch (all machines)</source>
        <translation>الدفعة (كل الأجهزة)</translation>
    </message>
    <message>
        <source>a folder</source>
        <translation>مجلد</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>تعذّرت الكتابة إلى %1: %2</translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation>تعذّرت قراءة %1: %2</translation>
    </message>
    <message>
        <source>%1 is not a run description: %2</source>
        <translation>%1 ليس وصف تدريب: %2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Choose a TorchScript model</source>
        <translation>اختر نموذج TorchScript</translation>
    </message>
    <message>
        <source>TorchScript (*.pt *.pth);;All files (*)</source>
        <translation>TorchScript (*.pt *.pth);;كل الملفات (*)</translation>
    </message>
    <message>
        <source>Choose the dataset folder</source>
        <translation>اختر مجلد مجموعة البيانات</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>جارٍ فحص النموذج ومجموعة البيانات…</translation>
    </message>
    <message>
        <source>Choose a TorchScript file for the model.</source>
        <translation>اختر ملف TorchScript للنموذج.</translation>
    </message>
    <message>
        <source>Choose where the dataset is.</source>
        <translation>اختر موقع مجموعة البيانات.</translation>
    </message>
    <message>
        <source>Check model and data</source>
        <translation>فحص النموذج والبيانات</translation>
    </message>
    <message>
        <source>gpt: small language model over the bytes of a text</source>
        <translation>gpt: نموذج لغة صغير على بايتات النص</translation>
    </message>
    <message>
        <source>CSV file (label= or target= column and numbers)</source>
        <translation>ملف CSV (عمود label= أو target= وأرقام)</translation>
    </message>
    <message>
        <source>Token file (nanoGPT .bin)</source>
        <translation>ملف رموز (nanoGPT .bin)</translation>
    </message>
    <message>
        <source>NumPy arrays (.npz with x_train, y_train)</source>
        <translation>مصفوفات NumPy (ملف ‎.npz فيه x_train وy_train)</translation>
    </message>
    <message>
        <source>Image folder (one subfolder per class)</source>
        <translation>مجلد صور (مجلد فرعي لكل فئة)</translation>
    </message>
    <message>
        <source>Automatic: from the model&apos;s output and the data</source>
        <translation>تلقائي: من مخرجات النموذج والبيانات</translation>
    </message>
    <message>
        <source>Cross-entropy (classes, next token)</source>
        <translation>الإنتروبيا المتقاطعة (فئات، الرمز التالي)</translation>
    </message>
    <message>
        <source>Mean squared error (regression)</source>
        <translation>متوسط مربع الخطأ (انحدار)</translation>
    </message>
    <message>
        <source>Mean absolute error (regression)</source>
        <translation>متوسط الخطأ المطلق (انحدار)</translation>
    </message>
    <message>
        <source>Huber (regression with outliers)</source>
        <translation>هوبر (انحدار مع قيم شاذة)</translation>
    </message>
    <message>
        <source>Binary cross-entropy (several labels each)</source>
        <translation>الإنتروبيا المتقاطعة الثنائية (عدة تسميات لكل عينة)</translation>
    </message>
    <message>
        <source>The model&apos;s own loss() method</source>
        <translation>دالة loss()‎ الخاصة بالنموذج</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>الخسارة</translation>
    </message>
    <message>
        <source>a .csv file[,target=COLUMN to predict a number]</source>
        <translation>ملف ‎.csv[,target=عمود للتنبؤ برقم]</translation>
    </message>
    <message>
        <source>a text file[,context=256]</source>
        <translation>ملف نصي[,context=256]</translation>
    </message>
    <message>
        <source>a .bin file[,dtype=uint16][,context=256]</source>
        <translation>ملف ‎.bin[,dtype=uint16][,context=256]</translation>
    </message>
    <message>
        <source>a folder of class folders[,size=64]</source>
        <translation>مجلد فيه مجلدات الفئات[,size=64]</translation>
    </message>
    <message>
        <source>a file</source>
        <translation>ملف</translation>
    </message>
    <message>
        <source>Choose the dataset file</source>
        <translation>اختر ملف البيانات</translation>
    </message>
    <message>
        <source>CSV (*.csv);;All files (*)</source>
        <translation>CSV (*.csv);;كل الملفات (*)</translation>
    </message>
    <message>
        <source>Text (*.txt *.md);;All files (*)</source>
        <translation>نص (*.txt *.md);;كل الملفات (*)</translation>
    </message>
    <message>
        <source>Token files (*.bin);;All files (*)</source>
        <translation>ملفات الرموز (*.bin);;كل الملفات (*)</translation>
    </message>
    <message>
        <source>NumPy (*.npz);;All files (*)</source>
        <translation>NumPy (*.npz);;كل الملفات (*)</translation>
    </message>
    <message>
        <source>all of them</source>
        <translation>جميعها</translation>
    </message>
    <message>
        <source>Train on the first N training samples only; 0 uses them all.</source>
        <translation>التدريب على أول N من عينات التدريب فقط؛ 0 يستخدمها كلها.</translation>
    </message>
    <message>
        <source>Training samples</source>
        <translation>عينات التدريب</translation>
    </message>
    <message>
        <source>Base as stored</source>
        <translation>الأساس كما خُزِّن</translation>
    </message>
    <message>
        <source>Base in 8 bits</source>
        <translation>الأساس بـ 8 بتات</translation>
    </message>
    <message>
        <source>Base in 4 bits (QLoRA)</source>
        <translation>الأساس بـ 4 بتات (QLoRA)</translation>
    </message>
    <message>
        <source>The frozen model&apos;s own weights in 4 bits (nf4) take about a quarter of bf16&apos;s memory: a 7-8B model fits a 12 GB card</source>
        <translation>أوزان النموذج المجمّدة بـ 4 بتات (nf4) تشغل نحو ربع ذاكرة bf16: نموذج بحجم 7-8B يتسع في بطاقة 12 GB</translation>
    </message>
    <message>
        <source>No</source>
        <translation>لا</translation>
    </message>
    <message>
        <source>Q4_K_M: smallest, about 4.9 bits a weight</source>
        <translation>Q4_K_M: الأصغر، نحو 4.9 بت لكل وزن</translation>
    </message>
    <message>
        <source>Q8_0: 8.5 bits a weight, close to the original</source>
        <translation>Q8_0: ‏8.5 بت لكل وزن، قريب من الأصل</translation>
    </message>
    <message>
        <source>F16: 16 bits, as trained</source>
        <translation>F16: ‏16 بت، كما دُرِّب</translation>
    </message>
    <message>
        <source>BF16: 16 bits, as trained</source>
        <translation>BF16: ‏16 بت، كما دُرِّب</translation>
    </message>
    <message>
        <source>At the end of the run, also write model.gguf and model.Modelfile in the run&apos;s folder: `ollama create NAME -f model.Modelfile` adds it to Ollama, and LM Studio and llama.cpp open model.gguf as it is</source>
        <translation>في نهاية التشغيل، اكتب أيضًا model.gguf و model.Modelfile في مجلد التشغيل: الأمر `ollama create NAME -f model.Modelfile` يضيفه إلى Ollama، ويفتح LM Studio و llama.cpp الملف model.gguf كما هو</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>تصدير لـ Ollama / llama.cpp</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> رمز</translation>
    </message>
    <message>
        <source>How many tokens the model sees at once: each training window holds this many, and predicts each next one.</source>
        <translation>عدد الرموز التي يراها النموذج دفعة واحدة: تحمل كل نافذة تدريب هذا العدد، ويتنبأ بكل رمز تالٍ.</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>السياق</translation>
    </message>
    <message>
        <source>= %1 tokens a step</source>
        <translation>= %1 رمز في كل خطوة</translation>
    </message>
    <message>
        <source>Batch set to %1 for this data; set it yourself to keep another.</source>
        <translation>ضُبطت الدفعة على %1 لهذه البيانات؛ اضبطها بنفسك للإبقاء على غيرها.</translation>
    </message>
    <message>
        <source>Preference pairs (JSON Lines of &quot;prompt&quot;, &quot;chosen&quot; and &quot;rejected&quot;; a Hugging Face model)</source>
        <translation>أزواج التفضيل (JSON Lines من &quot;prompt&quot; و&quot;chosen&quot; و&quot;rejected&quot;؛ نموذج Hugging Face)</translation>
    </message>
    <message>
        <source>DPO (preference pairs; LoRA adapters, whose base is the reference)</source>
        <translation>DPO (أزواج التفضيل؛ محولات LoRA، وأساسها هو المرجع)</translation>
    </message>
    <message>
        <source>ORPO (preference pairs; no reference model)</source>
        <translation>ORPO (أزواج التفضيل؛ بلا نموذج مرجعي)</translation>
    </message>
    <message>
        <source>DPO&apos;s β: how far the model may move from the reference. ORPO&apos;s λ: the weight of the preference term beside the chosen answer&apos;s loss.</source>
        <translation>β في DPO: مدى ابتعاد النموذج عن المرجع. λ في ORPO: وزن حد التفضيل بجانب خسارة الإجابة المختارة.</translation>
    </message>
    <message>
        <source>Preference strength (β, λ)</source>
        <translation>قوة التفضيل (β، λ)</translation>
    </message>
    <message>
        <source>The layers that get adapters. Checked at first: those the model&apos;s family adapts by default.</source>
        <translation>الطبقات التي تحصل على محوّلات. المحدَّدة في البداية: تلك التي تكيّفها عائلة النموذج افتراضيًا.</translation>
    </message>
    <message>
        <source>Adapted layers</source>
        <translation>الطبقات المكيَّفة</translation>
    </message>
    <message>
        <source>Preview…</source>
        <translation>معاينة…</translation>
    </message>
    <message>
        <source>The first conversations as the model will read them, the tokens that train, the lengths against the context, and any line that cannot be read.</source>
        <translation>المحادثات الأولى كما سيقرؤها النموذج، والرموز التي تُدرَّب، والأطوال مقارنة بالسياق، وأي سطر تتعذّر قراءته.</translation>
    </message>
    <message>
        <source>From the Hub…</source>
        <translation>من Hub…</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub and download a model, or choose one already downloaded</source>
        <translation>ابحث في Hugging Face Hub ونزِّل نموذجًا، أو اختر نموذجًا منزَّلًا من قبل</translation>
    </message>
    <message>
        <source>optional: how History will name this run</source>
        <translation>اختياري: الاسم الذي يظهر به هذا التدريب في السجل</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>الاسم</translation>
    </message>
    <message>
        <source>Split the weights and the optimizer across the machines</source>
        <translation>تقسيم الأوزان والمُحسِّن على الآلات</translation>
    </message>
    <message>
        <source>Each machine keeps one range of the fp32 weights, of the optimizer&apos;s state and of the gradients&apos; sum, and steps it itself: a full fine-tune can then need more memory than any one machine has. For synchronous and local SGD runs that train every weight, on more than one machine.</source>
        <translation>تحتفظ كل آلة بنطاق من أوزان fp32 ومن حالة المُحسِّن ومن مجموع التدرجات، وتُجري خطوته بنفسها: فيمكن عندئذ أن يحتاج الضبط الدقيق الكامل ذاكرةً أكبر مما لدى أيّ آلة وحدها. للتدريب المتزامن أو بـ SGD محلي الذي يدرّب كل الأوزان، على أكثر من آلة.</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SettingsDialog</name>
    <message>
        <source>Choose…</source>
        <translation>اختيار…</translation>
    </message>
    <message>
        <source>Choose a folder</source>
        <translation>اختر مجلدًا</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>الإعدادات</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>لغة النظام</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>اللغة</translation>
    </message>
    <message>
        <source>this computer&apos;s host name</source>
        <translation>اسم المضيف لهذا الحاسوب</translation>
    </message>
    <message>
        <source>Machine name</source>
        <translation>اسم الجهاز</translation>
    </message>
    <message>
        <source>Discovery port (UDP)</source>
        <translation>منفذ الاكتشاف (UDP)</translation>
    </message>
    <message>
        <source>Pairing port (TCP)</source>
        <translation>منفذ الإقران (TCP)</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>أي منفذ متاح</translation>
    </message>
    <message>
        <source>Training port (TCP)</source>
        <translation>منفذ التدريب (TCP)</translation>
    </message>
    <message>
        <source>Runs folder</source>
        <translation>مجلد التدريبات</translation>
    </message>
    <message>
        <source>Dataset cache</source>
        <translation>ذاكرة مجموعات البيانات المؤقتة</translation>
    </message>
    <message>
        <source>none: base models are received</source>
        <translation>لا شيء: تُستقبل النماذج الأساسية</translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation>مجلد النماذج</translation>
    </message>
    <message>
        <source>Train for paired machines while this one is idle</source>
        <translation>التدريب لصالح الأجهزة المقترنة عندما يكون هذا الجهاز خاملًا</translation>
    </message>
    <message>
        <source>A new language or new ports take effect when Tandem starts again.</source>
        <translation>تسري اللغة الجديدة أو المنافذ الجديدة عند تشغيل Tandem مرة أخرى.</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>حفظ</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>إلغاء</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SetupWizard</name>
    <message>
        <source>This machine</source>
        <translation>هذا الجهاز</translation>
    </message>
    <message>
        <source>Tandem trains on every device listed here. Other machines will see this machine under its name.</source>
        <translation>يتدرّب Tandem على كل جهاز حسابي مدرج هنا. ستعرف الأجهزة الأخرى هذا الجهاز باسمه.</translation>
    </message>
    <message>
        <source>Devices:</source>
        <translation>الأجهزة الحسابية:</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>الاسم:</translation>
    </message>
    <message>
        <source>Device ID: %1</source>
        <translation>معرّف الجهاز: %1</translation>
    </message>
    <message>
        <source>Find your other machine</source>
        <translation>ابحث عن جهازك الآخر</translation>
    </message>
    <message>
        <source>Start Tandem on the other machine too. Machines on this network appear below; choose one and press Next.</source>
        <translation>شغّل Tandem على الجهاز الآخر أيضًا. تظهر أجهزة هذه الشبكة أدناه؛ اختر واحدًا واضغط التالي.</translation>
    </message>
    <message>
        <source>IP address or host name</source>
        <translation>عنوان IP أو اسم المضيف</translation>
    </message>
    <message>
        <source>Add by address</source>
        <translation>إضافة بالعنوان</translation>
    </message>
    <message>
        <source>Nothing yet? Check that Tandem runs on the other machine and that both are on the same network. Firewalls must allow UDP port 47300 and TCP port 47301. On a Mac, allow Tandem under System Settings → Privacy &amp; Security → Local Network. Some Wi-Fi networks block discovery: then add the other machine by its address.</source>
        <translation>لا شيء بعد؟ تحقق من أن Tandem يعمل على الجهاز الآخر وأن الجهازين على الشبكة نفسها. يجب أن تسمح الجدران النارية بمنفذ UDP رقم 47300 ومنفذ TCP رقم 47301. على جهاز Mac، اسمح لـ Tandem من إعدادات النظام ← الخصوصية والأمن ← الشبكة المحلية. بعض شبكات Wi-Fi تمنع الاكتشاف: أضف الجهاز الآخر حينها بعنوانه.</translation>
    </message>
    <message>
        <source>To train on this machine alone, press Next without choosing a machine.</source>
        <translation>للتدريب على هذا الجهاز وحده، اضغط التالي دون اختيار جهاز.</translation>
    </message>
    <message>
        <source>Pair</source>
        <translation>الإقران</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>الرمزان متطابقان</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>الرمزان مختلفان</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>أعد المحاولة</translation>
    </message>
    <message>
        <source>Check that %1 shows the same code:</source>
        <translation>تحقق من أن %1 يعرض الرمز نفسه:</translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>جارٍ الاتصال بـ %1…</translation>
    </message>
    <message>
        <source>Waiting for the other machine to confirm…</source>
        <translation>بانتظار تأكيد الجهاز الآخر…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>جارٍ الإلغاء…</translation>
    </message>
    <message>
        <source>Paired with %1.</source>
        <translation>تم الإقران مع %1.</translation>
    </message>
    <message>
        <source>Press Next.</source>
        <translation>اضغط التالي.</translation>
    </message>
    <message>
        <source>Nobody answered in time.</source>
        <translation>لم يُجب أحد في الوقت المحدد.</translation>
    </message>
    <message>
        <source>Press Try again, and confirm the code on both machines within a minute.</source>
        <translation>اضغط أعد المحاولة، وأكّد الرمز على الجهازين خلال دقيقة.</translation>
    </message>
    <message>
        <source>You said the codes differ. Nothing was paired.</source>
        <translation>قلتَ إن الرمزين مختلفان. لم يتم أي إقران.</translation>
    </message>
    <message>
        <source>The other machine said the codes differ. Nothing was paired.</source>
        <translation>قال الجهاز الآخر إن الرمزين مختلفان. لم يتم أي إقران.</translation>
    </message>
    <message>
        <source>Codes that differ can mean that another device is answering in place of your machine. Check that you chose the right machine, then try again.</source>
        <translation>قد يعني اختلاف الرمزين أن جهازًا آخر يجيب بدلًا من جهازك. تحقق من أنك اخترت الجهاز الصحيح، ثم أعد المحاولة.</translation>
    </message>
    <message>
        <source>The other machine refused.</source>
        <translation>رفض الجهاز الآخر.</translation>
    </message>
    <message>
        <source>It may be busy or have refused several attempts: wait a minute and try again.</source>
        <translation>ربما يكون مشغولًا أو رفض عدة محاولات: انتظر دقيقة وأعد المحاولة.</translation>
    </message>
    <message>
        <source>Could not reach the other machine.</source>
        <translation>تعذّر الوصول إلى الجهاز الآخر.</translation>
    </message>
    <message>
        <source>Check that Tandem is running there and that its firewall allows TCP port 47301.</source>
        <translation>تحقق من أن Tandem يعمل هناك وأن جداره الناري يسمح بمنفذ TCP رقم 47301.</translation>
    </message>
    <message>
        <source>Pairing failed.</source>
        <translation>فشل الإقران.</translation>
    </message>
    <message>
        <source>Try again. If this repeats, see Troubleshooting in the user guide.</source>
        <translation>أعد المحاولة. إن تكرر ذلك، فراجع قسم استكشاف الأخطاء في دليل المستخدم.</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>تم</translation>
    </message>
    <message>
        <source>%1 and %2 are paired. They find each other on this network from now on; Tandem shares the training between them.</source>
        <translation>%1 و%2 مقترنان. سيجد كل منهما الآخر على هذه الشبكة من الآن؛ يوزّع Tandem التدريب بينهما.</translation>
    </message>
    <message>
        <source>%1 is ready to train on its own. You can pair another machine at any time from Machines → Set up pairing.</source>
        <translation>%1 جاهز للتدريب وحده. يمكنك إقران جهاز آخر في أي وقت من الأجهزة ← إعداد الإقران.</translation>
    </message>
    <message>
        <source>Press Finish to open the dashboard. Its New run tab is set up for the demo (mnist-cnn on Fashion-MNIST): press Start.</source>
        <translation>اضغط إنهاء لفتح لوحة التحكم. تبويب تدريب جديد فيها مُعدّ للعرض التوضيحي (mnist-cnn على Fashion-MNIST): اضغط ابدأ.</translation>
    </message>
    <message>
        <source>Set up Tandem</source>
        <translation>إعداد Tandem</translation>
    </message>
    <message>
        <source>Finish</source>
        <translation>إنهاء</translation>
    </message>
    <message>
        <source>&lt; &amp;Back</source>
        <translation>&lt; ال&amp;سابق</translation>
    </message>
    <message>
        <source>&amp;Next &gt;</source>
        <translation>ال&amp;تالي &gt;</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>إلغاء</translation>
    </message>
    <message>
        <source>Both machines show a code. When the codes are the same, no other device sits between the two.</source>
        <translation>يعرض الجهازان رمزًا. إذا تطابق الرمزان فلا يوجد جهاز آخر بينهما.</translation>
    </message>
    <message>
        <source>What was set up, and what comes next.</source>
        <translation>ما تم إعداده، وما الخطوة التالية.</translation>
    </message>
    <message>
        <source>%1 and %2 are paired: %2 asked, and you confirmed the code here.</source>
        <translation>تم إقران %1 و%2: طلب %2 ذلك، وأكدتَ الرمز هنا.</translation>
    </message>
    <message>
        <source>Runs started on %1 can now use this machine&apos;s devices. Keep Tandem open here: the dashboard shows the run while this machine takes part, with Stop lending to leave it. You can also start runs from here.</source>
        <translation>يمكن للتدريبات التي تبدأ على %1 الآن استخدام أجهزة هذا الجهاز. أبقِ Tandem مفتوحًا هنا: تعرض لوحة المعلومات التدريب ما دام هذا الجهاز مشاركًا فيه، ويتيح «إيقاف الإعارة» الخروج منه. يمكنك أيضًا بدء التدريبات من هنا.</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SweepTab</name>
    <message>
        <source>A sweep description (JSON): a run with a &quot;sweep&quot; object</source>
        <translation>وصف المسح (JSON): تدريب يحوي كائن &quot;sweep&quot;</translation>
    </message>
    <message>
        <source>Open…</source>
        <translation>فتح…</translation>
    </message>
    <message>
        <source>Where the trials&apos; run folders and sweep.jsonl go</source>
        <translation>مكان مجلدات التجارب والملف sweep.jsonl</translation>
    </message>
    <message>
        <source>Paired machines run trials too</source>
        <translation>الأجهزة المقترنة تشغّل تجارب أيضًا</translation>
    </message>
    <message>
        <source>Start sweep</source>
        <translation>بدء المسح</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>متابعة</translation>
    </message>
    <message>
        <source>Continue the sweep in this folder: finished trials are kept, interrupted ones resume from their checkpoints</source>
        <translation>متابعة المسح في هذا المجلد: تبقى التجارب المكتملة، وتُستأنف المتوقفة من نقاط استعادتها</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>إيقاف</translation>
    </message>
    <message>
        <source>Export best…</source>
        <translation>تصدير الأفضل…</translation>
    </message>
    <message>
        <source>Open a sweep file to start.</source>
        <translation>افتح ملف مسح للبدء.</translation>
    </message>
    <message>
        <source>Trial</source>
        <translation>التجربة</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>المعاملات</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>الجهاز الحسابي</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>الحالة</translation>
    </message>
    <message>
        <source>Sweep file</source>
        <translation>ملف المسح</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>المجلد</translation>
    </message>
    <message>
        <source>Parameter</source>
        <translation>المعامل</translation>
    </message>
    <message>
        <source>Open a sweep description</source>
        <translation>فتح وصف مسح</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>This sweep file cannot be used: %1</source>
        <translation>لا يمكن استخدام ملف المسح هذا: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n trial(s), %1, searching %2. Results go to the folder above.</source>
        <translation>
            <numerusform>لا تجارب (%n)، %1، يبحث في %2. تُحفظ النتائج في المجلد أعلاه.</numerusform>
            <numerusform>تجربة واحدة (%n)، %1، يبحث في %2. تُحفظ النتائج في المجلد أعلاه.</numerusform>
            <numerusform>تجربتان (%n)، %1، يبحث في %2. تُحفظ النتائج في المجلد أعلاه.</numerusform>
            <numerusform>%n تجارب، %1، يبحث في %2. تُحفظ النتائج في المجلد أعلاه.</numerusform>
            <numerusform>%n تجربةً، %1، يبحث في %2. تُحفظ النتائج في المجلد أعلاه.</numerusform>
            <numerusform>%n تجربة، %1، يبحث في %2. تُحفظ النتائج في المجلد أعلاه.</numerusform>
        </translation>
    </message>
    <message>
        <source>That folder already holds a sweep: press Continue to go on with it, or choose another folder.</source>
        <translation>يحوي هذا المجلد مسحًا بالفعل: اضغط &quot;متابعة&quot; لإكماله، أو اختر مجلدًا آخر.</translation>
    </message>
    <message>
        <source>Cannot continue: %1</source>
        <translation>تعذّرت المتابعة: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>لا حقب (%n)</numerusform>
            <numerusform>حقبة واحدة (%n)</numerusform>
            <numerusform>حقبتان (%n)</numerusform>
            <numerusform>%n حقب</numerusform>
            <numerusform>%n حقبةً</numerusform>
            <numerusform>%n حقبة</numerusform>
        </translation>
    </message>
    <message>
        <source>test loss</source>
        <translation>خسارة الاختبار</translation>
    </message>
    <message>
        <source>test accuracy</source>
        <translation>دقة الاختبار</translation>
    </message>
    <message>
        <source>Every trial</source>
        <translation>كل التجارب</translation>
    </message>
    <message>
        <source>step</source>
        <translation>الخطوة</translation>
    </message>
    <message>
        <source>The sweep did not start: %1</source>
        <translation>لم يبدأ المسح: %1</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>في الانتظار</translation>
    </message>
    <message>
        <source>running</source>
        <translation>قيد التشغيل</translation>
    </message>
    <message>
        <source>waiting for promotion</source>
        <translation>بانتظار الترقية</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>اكتمل</translation>
    </message>
    <message>
        <source>stopped early</source>
        <translation>أوقف مبكرًا</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>فشل</translation>
    </message>
    <message>
        <source>trial %1</source>
        <translation>التجربة %1</translation>
    </message>
    <message>
        <source>%1 (log10)</source>
        <translation>%1 (log10)</translation>
    </message>
    <message>
        <source>%1 against %2</source>
        <translation>%1 مقابل %2</translation>
    </message>
    <message>
        <source>trials</source>
        <translation>التجارب</translation>
    </message>
    <message>
        <source>best</source>
        <translation>الأفضل</translation>
    </message>
    <message numerus="yes">
        <source>Finished: %n trial(s) in %1 s.</source>
        <translation>
            <numerusform>اكتمل: لا تجارب (%n) في %1 ث.</numerusform>
            <numerusform>اكتمل: تجربة واحدة (%n) في %1 ث.</numerusform>
            <numerusform>اكتمل: تجربتان (%n) في %1 ث.</numerusform>
            <numerusform>اكتمل: %n تجارب في %1 ث.</numerusform>
            <numerusform>اكتمل: %n تجربةً في %1 ث.</numerusform>
            <numerusform>اكتمل: %n تجربة في %1 ث.</numerusform>
        </translation>
    </message>
    <message>
        <source>Stopped; Continue resumes it from the checkpoints.</source>
        <translation>توقف؛ &quot;متابعة&quot; تستأنفه من نقاط الاستعادة.</translation>
    </message>
    <message>
        <source>Best: trial %1 (%2), %3.</source>
        <translation>الأفضل: التجربة %1 (%2)، %3.</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n trial(s) started; running: %2; devices: %3.</source>
        <translation>
            <numerusform>بدأت %1 من %n تجربة؛ قيد التشغيل: %2؛ الأجهزة الحسابية: %3.</numerusform>
            <numerusform>بدأت %1 من %n تجربة؛ قيد التشغيل: %2؛ الأجهزة الحسابية: %3.</numerusform>
            <numerusform>بدأت %1 من %n تجربة؛ قيد التشغيل: %2؛ الأجهزة الحسابية: %3.</numerusform>
            <numerusform>بدأت %1 من %n تجربة؛ قيد التشغيل: %2؛ الأجهزة الحسابية: %3.</numerusform>
            <numerusform>بدأت %1 من %n تجربة؛ قيد التشغيل: %2؛ الأجهزة الحسابية: %3.</numerusform>
            <numerusform>بدأت %1 من %n تجربة؛ قيد التشغيل: %2؛ الأجهزة الحسابية: %3.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::TryDialog</name>
    <message>
        <source> tokens</source>
        <translation> رمزًا</translation>
    </message>
    <message>
        <source>Only the likeliest tokens that together make up this much probability are drawn from.</source>
        <translation>يُسحب فقط من الرموز الأرجح التي يبلغ مجموع احتمالاتها هذا القدر.</translation>
    </message>
    <message>
        <source>Tuned</source>
        <translation>بعد الضبط</translation>
    </message>
    <message>
        <source>Reference: the model before tuning</source>
        <translation>المرجع: النموذج قبل الضبط</translation>
    </message>
    <message>
        <source>Answer as in a chat</source>
        <translation>أجب كما في محادثة</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>أوقف</translation>
    </message>
    <message>
        <source>Try %1</source>
        <translation>جرّب %1</translation>
    </message>
    <message>
        <source> bytes</source>
        <translation> بايت</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>الطول</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>الحرارة</translation>
    </message>
    <message>
        <source>Could not generate: %1</source>
        <translation>تعذّر الإنشاء: %1</translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation>جارٍ التوليد…</translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), %1 tokens/s</source>
        <translation>
            <numerusform>%n رمز، %1 رمز/ث</numerusform>
            <numerusform>رمز واحد (%n)، %1 رمز/ث</numerusform>
            <numerusform>رمزان (%n)، %1 رمز/ث</numerusform>
            <numerusform>%n رموز، %1 رمز/ث</numerusform>
            <numerusform>%n رمزًا، %1 رمز/ث</numerusform>
            <numerusform>%n رمز، %1 رمز/ث</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not generate.</source>
        <translation>تعذّر التوليد.</translation>
    </message>
    <message>
        <source>Stopped: %1.</source>
        <translation>توقف: %1.</translation>
    </message>
    <message>
        <source>Done: %1.</source>
        <translation>تم: %1.</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>أرسل</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>أعد التوليد</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>محادثة جديدة</translation>
    </message>
    <message>
        <source>A message for the model, or text to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>رسالة إلى النموذج، أو نص ليكمله. Enter يرسل؛ Shift+Enter يبدأ سطرًا جديدًا.</translation>
    </message>
    <message>
        <source>Text for the model to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>نص ليكمله النموذج. Enter يرسل؛ Shift+Enter يبدأ سطرًا جديدًا.</translation>
    </message>
    <message>
        <source>Optional: how the model should answer</source>
        <translation>اختياري: كيف ينبغي أن يجيب النموذج</translation>
    </message>
    <message>
        <source>Writes your messages with the model&apos;s chat template and shows the assistant&apos;s answers; off, the model continues your text.</source>
        <translation>يكتب رسائلك بقالب المحادثة الخاص بالنموذج ويعرض إجابات المساعد؛ وعند إيقافه يكمل النموذج نصك.</translation>
    </message>
    <message>
        <source>0 always takes the likeliest next token; higher values vary more.</source>
        <translation>0 يأخذ دائمًا الرمز التالي الأرجح؛ والقيم الأعلى تتنوع أكثر.</translation>
    </message>
    <message>
        <source>System</source>
        <translation>النظام</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>أنت: %1</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>إغلاق</translation>
    </message>
</context>
</TS>
