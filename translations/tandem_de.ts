<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de">
<context>
    <name>Format</name>
    <message>
        <source>GPU %1 (CUDA): %2, %3</source>
        <translation>GPU %1 (CUDA): %2, %3</translation>
    </message>
    <message>
        <source>Apple GPU (MPS): %1, %2 shared memory</source>
        <translation>Apple-GPU (MPS): %1, %2 gemeinsamer Speicher</translation>
    </message>
    <message numerus="yes">
        <source>CPU: %1, %n core(s), %2 RAM</source>
        <translation>
            <numerusform>CPU: %1, %n Kern, %2 RAM</numerusform>
            <numerusform>CPU: %1, %n Kerne, %2 RAM</numerusform>
        </translation>
    </message>
    <message>
        <source>unknown model</source>
        <translation>unbekanntes Modell</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>Genauigkeit (%)</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>Perplexität</translation>
    </message>
    <message>
        <source>R²</source>
        <translation>R²</translation>
    </message>
    <message>
        <source>Test loss</source>
        <translation>Testverlust</translation>
    </message>
    <message>
        <source>not measured yet</source>
        <translation>noch nicht gemessen</translation>
    </message>
    <message>
        <source>Reward accuracy (%)</source>
        <translation>Belohnungsgenauigkeit (%)</translation>
    </message>
    <message>
        <source>held-out reward accuracy %1%</source>
        <translation>Belohnungsgenauigkeit auf zurückgehaltenen Paaren %1 %</translation>
    </message>
    <message>
        <source>test accuracy %1%</source>
        <translation>Testgenauigkeit %1 %</translation>
    </message>
    <message>
        <source>perplexity %1</source>
        <translation>Perplexität %1</translation>
    </message>
    <message>
        <source>R² %1</source>
        <translation>R² %1</translation>
    </message>
    <message>
        <source>test loss %1</source>
        <translation>Testverlust %1</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 Token/s</translation>
    </message>
    <message>
        <source>%1 samples/s</source>
        <translation>%1 Beispiele/s</translation>
    </message>
    <message>
        <source>perplexity %1, next-token accuracy %2%</source>
        <translation>Perplexität %1, Genauigkeit des nächsten Tokens %2 %</translation>
    </message>
</context>
<context>
    <name>tandem::ui::ChartPanel</name>
    <message>
        <source>this machine</source>
        <translation>dieser Rechner</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>Trainingsverlust</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>Verlust</translation>
    </message>
    <message>
        <source>Loss per step</source>
        <translation>Verlust je Schritt</translation>
    </message>
    <message>
        <source>Smoothed</source>
        <translation>Geglättet</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>Epoche</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>Genauigkeit (%)</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>Test</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>Training</translation>
    </message>
    <message>
        <source>Throughput per worker</source>
        <translation>Durchsatz je Worker</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>Samples/s</translation>
    </message>
    <message>
        <source>Where each worker&apos;s time goes</source>
        <translation>Wofür jeder Worker seine Zeit braucht</translation>
    </message>
    <message>
        <source>Seconds</source>
        <translation>Sekunden</translation>
    </message>
    <message>
        <source>Compute</source>
        <translation>Rechnen</translation>
    </message>
    <message>
        <source>Communicate</source>
        <translation>Übertragen</translation>
    </message>
    <message>
        <source>Wait</source>
        <translation>Warten</translation>
    </message>
    <message>
        <source>Reward accuracy</source>
        <translation>Belohnungsgenauigkeit</translation>
    </message>
    <message>
        <source>Loss, reward margin</source>
        <translation>Verlust, Belohnungsabstand</translation>
    </message>
    <message>
        <source>Reward margin</source>
        <translation>Belohnungsabstand</translation>
    </message>
    <message>
        <source>Held-out perplexity</source>
        <translation>Perplexität auf zurückgehaltenen Daten</translation>
    </message>
    <message>
        <source>Held-out R²</source>
        <translation>R² auf zurückgehaltenen Daten</translation>
    </message>
    <message>
        <source>Held-out loss</source>
        <translation>Verlust auf zurückgehaltenen Daten</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>Token/s</translation>
    </message>
</context>
<context>
    <name>tandem::ui::CompareDialog</name>
    <message numerus="yes">
        <source>Compare %n run(s)</source>
        <translation>
            <numerusform>%n Lauf vergleichen</numerusform>
            <numerusform>%n Läufe vergleichen</numerusform>
        </translation>
    </message>
    <message>
        <source>Training loss (smoothed)</source>
        <translation>Trainingsverlust (geglättet)</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>Verlust</translation>
    </message>
    <message>
        <source>Held-out figure per epoch</source>
        <translation>Wert auf zurückgehaltenen Daten je Epoche</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>Epoche</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>Geschwindigkeit</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>Token/s</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>Samples/s</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>ja</translation>
    </message>
    <message>
        <source>no</source>
        <translation>nein</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>Gestartet</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>Datensatz</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>Lernrate</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>Zeitplan</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>Optimierer</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>Epochen</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>Batch</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>Adapter (LoRA)</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>Modus</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>Rechner</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>Ergebnis</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>Dauer</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>Notizen</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <source>Tokens or samples/s</source>
        <translation>Token oder Samples/s</translation>
    </message>
</context>
<context>
    <name>tandem::ui::DataPreviewDialog</name>
    <message>
        <source>Reading the data…</source>
        <translation>Daten werden gelesen…</translation>
    </message>
    <message>
        <source>Preview of the data</source>
        <translation>Vorschau der Daten</translation>
    </message>
    <message>
        <source>Tokens per document</source>
        <translation>Token je Dokument</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>Dokumente</translation>
    </message>
    <message>
        <source>The data cannot be previewed: %1</source>
        <translation>Für die Daten gibt es keine Vorschau: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n conversation(s)</source>
        <translation>
            <numerusform>%n Gespräch</numerusform>
            <numerusform>%n Gespräche</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n document(s)</source>
        <translation>
            <numerusform>%n Dokument</numerusform>
            <numerusform>%n Dokumente</numerusform>
        </translation>
    </message>
    <message>
        <source>, %1 tokens</source>
        <translation>, %1 Token</translation>
    </message>
    <message>
        <source>%1 longer than the context of %2 tokens (each is split across windows)</source>
        <translation>%1 länger als der Kontext von %2 Token (jedes wird auf Fenster verteilt)</translation>
    </message>
    <message>
        <source>%1 cut by a window&apos;s edge</source>
        <translation>%1 von einer Fenstergrenze geschnitten</translation>
    </message>
    <message>
        <source>%1 windows of %2 tokens, %3 of them left out for holding nothing to learn</source>
        <translation>%1 Fenster zu %2 Token, davon %3 ausgelassen, weil sie nichts zu lernen enthalten</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s) cannot be read (listed below); a run stops at the first</source>
        <translation>
            <numerusform>%n Zeile kann nicht gelesen werden (unten aufgeführt); ein Lauf hält bei der ersten an</numerusform>
            <numerusform>%n Zeilen können nicht gelesen werden (unten aufgeführt); ein Lauf hält bei der ersten an</numerusform>
        </translation>
    </message>
    <message>
        <source>Line %1: %2 tokens, %3 trained</source>
        <translation>Zeile %1: %2 Token, %3 trainiert</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>Token</translation>
    </message>
    <message>
        <source>The context</source>
        <translation>Der Kontext</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
</context>
<context>
    <name>tandem::ui::HistoryModel</name>
    <message>
        <source>Started</source>
        <translation>Gestartet</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>Datensatz</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>Abgeschlossen</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>Angehalten</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>Fehlgeschlagen</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>Läuft</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>Unterbrochen</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>Ergebnis</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>Geschwindigkeit</translation>
    </message>
    <message>
        <source>%1&apos;s model</source>
        <translation>Modell von %1</translation>
    </message>
    <message>
        <source>Lending to %1</source>
        <translation>Leiht an %1</translation>
    </message>
    <message>
        <source>Lent to %1</source>
        <translation>An %1 geliehen</translation>
    </message>
    <message numerus="yes">
        <source>this machine: %n sample(s)</source>
        <translation>
            <numerusform>dieser Rechner: %n Beispiel</numerusform>
            <numerusform>dieser Rechner: %n Beispiele</numerusform>
        </translation>
    </message>
    <message>
        <source>%1, loss %2</source>
        <translation>%1, Verlust %2</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>Dauer</translation>
    </message>
    <message>
        <source>lr %1</source>
        <translation>LR %1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>%n Epoche</numerusform>
            <numerusform>%n Epochen</numerusform>
        </translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation>Batch %1</translation>
    </message>
    <message>
        <source>LoRA %1</source>
        <translation>LoRA %1</translation>
    </message>
    <message numerus="yes">
        <source>%n machine(s)</source>
        <translation>
            <numerusform>%n Rechner</numerusform>
            <numerusform>%n Rechner</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::HubDialog</name>
    <message>
        <source>Get a model</source>
        <translation>Modell holen</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub: llama, qwen, smollm…</source>
        <translation>Im Hugging Face Hub suchen: llama, qwen, smollm…</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>Suchen</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>Downloads</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>Aufgabe</translation>
    </message>
    <message>
        <source>Access</source>
        <translation>Zugang</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>Herunterladen</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Anhalten</translation>
    </message>
    <message>
        <source>On the Hugging Face Hub</source>
        <translation>Im Hugging Face Hub</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Größe</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>Ordner</translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation>Dieses Modell verwenden</translation>
    </message>
    <message>
        <source>On this computer (%1)</source>
        <translation>Auf diesem Computer (%1)</translation>
    </message>
    <message>
        <source>hf_… from huggingface.co/settings/tokens</source>
        <translation>hf_… von huggingface.co/settings/tokens</translation>
    </message>
    <message>
        <source>Save token</source>
        <translation>Token speichern</translation>
    </message>
    <message>
        <source>Access token</source>
        <translation>Zugangstoken</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <source>%1 of %2: %3</source>
        <translation>%1 von %2: %3</translation>
    </message>
    <message numerus="yes">
        <source>Downloaded: %n file(s), %1 (%2 were here already). Choose it below and press Use this model.</source>
        <translation>
            <numerusform>Heruntergeladen: %n Datei, %1 (%2 waren schon da). Wählen Sie es unten und drücken Sie „Dieses Modell verwenden“.</numerusform>
            <numerusform>Heruntergeladen: %n Dateien, %1 (%2 waren schon da). Wählen Sie es unten und drücken Sie „Dieses Modell verwenden“.</numerusform>
        </translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>Suche läuft…</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>Frei</translation>
    </message>
    <message>
        <source>Gated: needs a token</source>
        <translation>Geschützt: braucht ein Token</translation>
    </message>
    <message>
        <source>No model on the Hub matches.</source>
        <translation>Kein Modell im Hub passt.</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s). Choose one and press Download.</source>
        <translation>
            <numerusform>%n Modell. Wählen Sie eines und drücken Sie „Herunterladen“.</numerusform>
            <numerusform>%n Modelle. Wählen Sie eines und drücken Sie „Herunterladen“.</numerusform>
        </translation>
    </message>
    <message>
        <source>Asking the Hub for %1&apos;s files…</source>
        <translation>Die Dateien von %1 werden beim Hub erfragt…</translation>
    </message>
    <message>
        <source>%1 (incomplete)</source>
        <translation>%1 (unvollständig)</translation>
    </message>
    <message>
        <source>No token: open models download without one; gated ones (Llama, Gemma) need one that has accepted their terms.</source>
        <translation>Kein Token: Freie Modelle laden ohne eines; geschützte (Llama, Gemma) brauchen eines, mit dem ihre Bedingungen akzeptiert wurden.</translation>
    </message>
    <message>
        <source>A token is kept in the system&apos;s keychain.</source>
        <translation>Ein Token liegt im Schlüsselbund des Systems.</translation>
    </message>
    <message>
        <source>The token in HF_TOKEN is used.</source>
        <translation>Das Token aus HF_TOKEN wird verwendet.</translation>
    </message>
    <message>
        <source>A token is kept in %1 (readable by you only).</source>
        <translation>Ein Token liegt in %1 (nur für Sie lesbar).</translation>
    </message>
</context>
<context>
    <name>tandem::ui::MainWindow</name>
    <message>
        <source>Export for Ollama / llama.cpp…</source>
        <translation>Für Ollama / llama.cpp exportieren…</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>unbekannt</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, the usual choice</source>
        <translation>Q4_K_M: etwa %1, die übliche Wahl</translation>
    </message>
    <message>
        <source>Q8_0: about %1, nearly as trained</source>
        <translation>Q8_0: etwa %1, fast wie trainiert</translation>
    </message>
    <message>
        <source>F16: about %1, as trained</source>
        <translation>F16: etwa %1, wie trainiert</translation>
    </message>
    <message>
        <source>BF16: about %1, as trained</source>
        <translation>BF16: etwa %1, wie trainiert</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>Für Ollama / llama.cpp exportieren</translation>
    </message>
    <message>
        <source>How the weights are stored:</source>
        <translation>Wie die Gewichte gespeichert werden:</translation>
    </message>
    <message>
        <source>Export as GGUF</source>
        <translation>Als GGUF exportieren</translation>
    </message>
    <message>
        <source>GGUF (*.gguf)</source>
        <translation>GGUF (*.gguf)</translation>
    </message>
    <message>
        <source>Export Hugging Face folder…</source>
        <translation>Hugging-Face-Ordner exportieren…</translation>
    </message>
    <message>
        <source>Export adapters (PEFT)…</source>
        <translation>Adapter exportieren (PEFT)…</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Ausblenden</translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation>Cluster</translation>
    </message>
    <message>
        <source>Load…</source>
        <translation>Laden…</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>Speichern…</translation>
    </message>
    <message>
        <source>Load a run description (JSON, as for tandem train --config)</source>
        <translation>Eine Laufbeschreibung laden (JSON, wie für tandem train --config)</translation>
    </message>
    <message>
        <source>Save this run description as JSON</source>
        <translation>Diese Laufbeschreibung als JSON speichern</translation>
    </message>
    <message>
        <source>New run</source>
        <translation>Neuer Lauf</translation>
    </message>
    <message>
        <source>History</source>
        <translation>Verlauf</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>Starten</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>Pausieren</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stoppen</translation>
    </message>
    <message>
        <source>Ready. The demo is set up in New run: press Start.</source>
        <translation>Bereit. Die Demo ist unter „Neuer Lauf“ eingerichtet: Starten drücken.</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>Protokoll</translation>
    </message>
    <message>
        <source>Paused at step %1. Resume continues where it stopped.</source>
        <translation>Pausiert bei Schritt %1. Fortsetzen macht dort weiter.</translation>
    </message>
    <message>
        <source>Stopping: saving a checkpoint…</source>
        <translation>Wird gestoppt: Checkpoint wird gespeichert…</translation>
    </message>
    <message>
        <source>Training %1 on %2: %3 training samples, %4 steps per epoch</source>
        <translation>Trainiere %1 auf %2: %3 Trainingsbeispiele, %4 Schritte je Epoche</translation>
    </message>
    <message>
        <source>A machine left the run: %1. Its share goes to the others. Check that it is switched on and on this network; it can join again.</source>
        <translation>Ein Rechner hat den Lauf verlassen: %1. Sein Anteil geht an die anderen. Prüfen Sie, ob er eingeschaltet und in diesem Netzwerk ist; er kann wieder beitreten.</translation>
    </message>
    <message>
        <source>This machine cannot join the network: %1. Another program may use the same ports; change them in Settings.</source>
        <translation>Dieser Rechner kann dem Netzwerk nicht beitreten: %1. Vielleicht nutzt ein anderes Programm dieselben Ports; ändern Sie sie in den Einstellungen.</translation>
    </message>
    <message>
        <source>Paired: %1</source>
        <translation>Gekoppelt: %1</translation>
    </message>
    <message>
        <source>This machine is training for %1.</source>
        <translation>Dieser Rechner trainiert für %1.</translation>
    </message>
    <message>
        <source>This machine finished its work for %1.</source>
        <translation>Dieser Rechner hat seine Arbeit für %1 beendet.</translation>
    </message>
    <message>
        <source>Show Tandem</source>
        <translation>Tandem anzeigen</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Beenden</translation>
    </message>
    <message>
        <source>Pair a machine…</source>
        <translation>Rechner koppeln…</translation>
    </message>
    <message>
        <source>Unpair</source>
        <translation>Entkoppeln</translation>
    </message>
    <message>
        <source>Unpair %1? It can no longer train with this machine until you pair the two again.</source>
        <translation>%1 entkoppeln? Er kann dann nicht mehr mit diesem Rechner trainieren, bis Sie beide erneut koppeln.</translation>
    </message>
    <message>
        <source>Export TorchScript…</source>
        <translation>Als TorchScript exportieren…</translation>
    </message>
    <message>
        <source>Export safetensors…</source>
        <translation>Als safetensors exportieren…</translation>
    </message>
    <message>
        <source>Resume run</source>
        <translation>Lauf fortsetzen</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>Ordner öffnen</translation>
    </message>
    <message>
        <source>&amp;Tandem</source>
        <translation>&amp;Tandem</translation>
    </message>
    <message>
        <source>&amp;Load run description…</source>
        <translation>Laufbeschreibung &amp;laden…</translation>
    </message>
    <message>
        <source>&amp;Save run description…</source>
        <translation>Laufbeschreibung &amp;speichern…</translation>
    </message>
    <message>
        <source>S&amp;ettings…</source>
        <translation>&amp;Einstellungen…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <source>&amp;Machines</source>
        <translation>&amp;Rechner</translation>
    </message>
    <message>
        <source>Set up &amp;pairing…</source>
        <translation>&amp;Kopplung einrichten…</translation>
    </message>
    <message>
        <source>&amp;Add a machine by address…</source>
        <translation>Rechner über &amp;Adresse hinzufügen…</translation>
    </message>
    <message>
        <source>Add a machine</source>
        <translation>Rechner hinzufügen</translation>
    </message>
    <message>
        <source>IP address or host name of the machine:</source>
        <translation>IP-Adresse oder Hostname des Rechners:</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <source>User &amp;guide</source>
        <translation>&amp;Benutzerhandbuch</translation>
    </message>
    <message>
        <source>&amp;About Tandem</source>
        <translation>Ü&amp;ber Tandem</translation>
    </message>
    <message>
        <source>About Tandem</source>
        <translation>Über Tandem</translation>
    </message>
    <message>
        <source>Tandem %1
Trains one PyTorch model across your own machines.
Protocol version %2.</source>
        <translation>Tandem %1
Trainiert ein PyTorch-Modell auf Ihren eigenen Rechnern.
Protokollversion %2.</translation>
    </message>
    <message>
        <source>A device ran out of memory (%1). Lower the batch size or leave that machine out, then start again.</source>
        <translation>Einem Gerät ist der Speicher ausgegangen (%1). Verkleinern Sie die Batchgröße oder lassen Sie diesen Rechner weg und starten Sie neu.</translation>
    </message>
    <message>
        <source>The dataset cannot be used: %1. Check the folder or file and its format (the user guide lists the formats).</source>
        <translation>Der Datensatz ist nicht verwendbar: %1. Prüfen Sie Ordner oder Datei und das Format (das Benutzerhandbuch listet die Formate).</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. Save it with torch.jit.save after torch.jit.script, and check that it returns class scores.</source>
        <translation>Das Modell ist nicht verwendbar: %1. Speichern Sie es nach torch.jit.script mit torch.jit.save und prüfen Sie, dass es Klassenwerte liefert.</translation>
    </message>
    <message>
        <source>A machine could not join: %1.</source>
        <translation>Ein Rechner konnte nicht beitreten: %1.</translation>
    </message>
    <message>
        <source>The run stopped with an error: %1</source>
        <translation>Der Lauf wurde mit einem Fehler beendet: %1</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>Modell und Datensatz werden geprüft…</translation>
    </message>
    <message>
        <source>No machine is chosen to train. Tick at least one machine under New run → Machines.</source>
        <translation>Kein Rechner ist zum Trainieren gewählt. Haken Sie unter „Neuer Lauf → Rechner“ mindestens einen an.</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>Wird gestartet…</translation>
    </message>
    <message numerus="yes">
        <source>Starting; inviting %n machine(s)…</source>
        <translation>
            <numerusform>Wird gestartet; %n Rechner wird eingeladen…</numerusform>
            <numerusform>Wird gestartet; %n Rechner werden eingeladen…</numerusform>
        </translation>
    </message>
    <message>
        <source>Run folder: %1</source>
        <translation>Laufordner: %1</translation>
    </message>
    <message>
        <source>That run finished or has no checkpoint; start a new run instead.</source>
        <translation>Dieser Lauf ist abgeschlossen oder hat keinen Checkpoint; starten Sie stattdessen einen neuen Lauf.</translation>
    </message>
    <message>
        <source>Cannot resume: %1</source>
        <translation>Fortsetzen nicht möglich: %1</translation>
    </message>
    <message>
        <source>Stopped at step %1; a checkpoint is saved.</source>
        <translation>Angehalten bei Schritt %1; ein Checkpoint ist gespeichert.</translation>
    </message>
    <message>
        <source>The run stopped at step %1. Resume it from History.</source>
        <translation>Der Lauf wurde bei Schritt %1 angehalten. Setzen Sie ihn im Verlauf fort.</translation>
    </message>
    <message>
        <source>The run failed.</source>
        <translation>Der Lauf ist fehlgeschlagen.</translation>
    </message>
    <message>
        <source>Choose a run in History first.</source>
        <translation>Wählen Sie zuerst einen Lauf im Verlauf.</translation>
    </message>
    <message>
        <source>Export as TorchScript</source>
        <translation>Als TorchScript exportieren</translation>
    </message>
    <message>
        <source>Export as safetensors</source>
        <translation>Als safetensors exportieren</translation>
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
        <translation>Dieser Lauf hat keinen Checkpoint zum Exportieren.</translation>
    </message>
    <message>
        <source>Exported to %1. In Python: %2</source>
        <translation>Exportiert nach %1. In Python: %2</translation>
    </message>
    <message>
        <source>The export failed: %1</source>
        <translation>Der Export ist fehlgeschlagen: %1</translation>
    </message>
    <message>
        <source>Pair with %1?</source>
        <translation>Mit %1 koppeln?</translation>
    </message>
    <message>
        <source>%1 (%2) wants to pair with this machine.

Does it show this code?

%3 %4</source>
        <translation>%1 (%2) möchte sich mit diesem Rechner koppeln.

Zeigt er diesen Code?

%3 %4</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>Die Codes stimmen überein</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>Die Codes sind verschieden</translation>
    </message>
    <message>
        <source>Save run description</source>
        <translation>Laufbeschreibung speichern</translation>
    </message>
    <message>
        <source>Run description (*.json)</source>
        <translation>Laufbeschreibung (*.json)</translation>
    </message>
    <message>
        <source>Saved the run description to %1; train it with: tandem train --config %1</source>
        <translation>Laufbeschreibung in %1 gespeichert; trainieren mit: tandem train --config %1</translation>
    </message>
    <message>
        <source>Load run description</source>
        <translation>Laufbeschreibung laden</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>Trainiert</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>Pausiert</translation>
    </message>
    <message>
        <source>Stopping</source>
        <translation>Wird gestoppt</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>Untätig</translation>
    </message>
    <message>
        <source>Quit Tandem</source>
        <translation>Tandem beenden</translation>
    </message>
    <message>
        <source>A run is in progress. Stop it (a checkpoint is saved, so it can be resumed) and quit?</source>
        <translation>Ein Lauf ist im Gange. Stoppen (ein Checkpoint wird gespeichert, er lässt sich fortsetzen) und beenden?</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>Hinzufügen</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Stop and quit</source>
        <translation>Stoppen und beenden</translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation>Sweep</translation>
    </message>
    <message>
        <source>TorchScript (*.pt);;safetensors (*.safetensors)</source>
        <translation>TorchScript (*.pt);;safetensors (*.safetensors)</translation>
    </message>
    <message>
        <source>Try it…</source>
        <translation>Ausprobieren…</translation>
    </message>
    <message>
        <source>Let a language model continue a prompt of yours.</source>
        <translation>Ein Sprachmodell setzt einen Text von Ihnen fort.</translation>
    </message>
    <message>
        <source>Epoch %1: %2, test loss %3</source>
        <translation>Epoche %1: %2, Testverlust %3</translation>
    </message>
    <message>
        <source>The run finished: %1. Export the model from History.</source>
        <translation>Der Lauf ist fertig: %1. Exportieren Sie das Modell im Verlauf.</translation>
    </message>
    <message>
        <source>Pausing after the step in progress…</source>
        <translation>Wird nach dem laufenden Schritt pausiert…</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 done · evaluating on %3 test samples… %4 %</source>
        <translation>Epoche %1 von %2 fertig · Auswertung auf %3 Test-Samples… %4 %</translation>
    </message>
    <message>
        <source>device %1</source>
        <translation>Gerät %1</translation>
    </message>
    <message>
        <source>Device ID: %1
Address: %2</source>
        <translation>Geräte-ID: %1
Adresse: %2</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>Exportieren</translation>
    </message>
    <message>
        <source>Stop lending</source>
        <translation>Verleihen beenden</translation>
    </message>
    <message>
        <source>End this machine&apos;s part in the other machine&apos;s run; the run goes on without it.</source>
        <translation>Beendet den Anteil dieses Rechners am Lauf des anderen Rechners; der Lauf geht ohne ihn weiter.</translation>
    </message>
    <message>
        <source>This machine is %1 (device %2), listening on port %3</source>
        <translation>Dieser Rechner ist %1 (Gerät %2) und lauscht auf Port %3</translation>
    </message>
    <message>
        <source>Training for %1</source>
        <translation>Trainiert für %1</translation>
    </message>
    <message>
        <source>This machine finished its work for %1. The charts show its part of that run.</source>
        <translation>Dieser Rechner hat seine Arbeit für %1 beendet. Die Diagramme zeigen seinen Anteil an diesem Lauf.</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1</source>
        <translation>Dieser Rechner ist an den Lauf von %1 verliehen</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1 (device %2)</source>
        <translation>Dieser Rechner ist an den Lauf von %1 (Gerät %2) verliehen</translation>
    </message>
    <message>
        <source>%1: receiving the model and the data…</source>
        <translation>%1: Modell und Daten werden empfangen…</translation>
    </message>
    <message>
        <source>%1: %2 paused the run; this machine waits.</source>
        <translation>%1: %2 hat den Lauf angehalten; dieser Rechner wartet.</translation>
    </message>
    <message>
        <source>%1 on %2: waiting for the first step…</source>
        <translation>%1 auf %2: wartet auf den ersten Schritt…</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>Schritt %1</translation>
    </message>
    <message>
        <source>this machine&apos;s share %1 %</source>
        <translation>Anteil dieses Rechners %1 %</translation>
    </message>
    <message>
        <source>loss %1</source>
        <translation>Verlust %1</translation>
    </message>
    <message>
        <source>%1 on %2</source>
        <translation>%1 auf %2</translation>
    </message>
    <message>
        <source>This machine is lending its device to another run: press Stop lending first.</source>
        <translation>Dieser Rechner verleiht sein Gerät an einen anderen Lauf: zuerst „Verleihen beenden“ drücken.</translation>
    </message>
    <message>
        <source>Mode: %1</source>
        <translation>Modus: %1</translation>
    </message>
    <message>
        <source>The model cannot be used: %1.</source>
        <translation>Das Modell kann nicht verwendet werden: %1.</translation>
    </message>
    <message>
        <source>Export the Hugging Face folder as</source>
        <translation>Hugging-Face-Ordner exportieren als</translation>
    </message>
    <message>
        <source>Export the adapters as</source>
        <translation>Adapter exportieren als</translation>
    </message>
    <message>
        <source>Resuming…</source>
        <translation>Wird fortgesetzt…</translation>
    </message>
    <message>
        <source>Ready: press Start to train with these settings.</source>
        <translation>Bereit: Start trainiert mit diesen Einstellungen.</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 · step %3 of %4 · elapsed %5 · about %6 left · %7 · loss %8</source>
        <translation>Epoche %1 von %2 · Schritt %3 von %4 · vergangen %5 · noch etwa %6 · %7 · Verlust %8</translation>
    </message>
    <message>
        <source>Finished: %1, %2.</source>
        <translation>Fertig: %1, %2.</translation>
    </message>
    <message>
        <source>This machine lent its device to that run; its model is on the machine that ran it.</source>
        <translation>Dieser Rechner hat sein Gerät nur für diesen Lauf verliehen; das Modell liegt auf dem Rechner, der ihn ausgeführt hat.</translation>
    </message>
    <message>
        <source>New run like this</source>
        <translation>Neuer Lauf wie dieser</translation>
    </message>
    <message>
        <source>Puts this run&apos;s settings in the New run form.</source>
        <translation>Übernimmt die Einstellungen dieses Laufs in das Formular „Neuer Lauf“.</translation>
    </message>
    <message>
        <source>Folder: %1</source>
        <translation>Ordner: %1</translation>
    </message>
    <message>
        <source>No file manager opened the folder. The run&apos;s files are in %1</source>
        <translation>Kein Dateimanager hat den Ordner geöffnet. Die Dateien des Laufs liegen in %1</translation>
    </message>
    <message>
        <source>Not started.</source>
        <translation>Nicht gestartet.</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. The user guide lists the model families Tandem reads.</source>
        <translation>Das Modell kann nicht verwendet werden: %1. Das Benutzerhandbuch nennt die Modellfamilien, die Tandem liest.</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, hardly smaller here: this model&apos;s rows are not whole blocks of 256 values, which 4 bits need, so they are stored at 5 to 8 bits</source>
        <translation>Q4_K_M: etwa %1, hier kaum kleiner: Die Zeilen dieses Modells sind keine ganzen Blöcke aus 256 Werten, die 4 Bit brauchen, daher werden sie mit 5 bis 8 Bit gespeichert</translation>
    </message>
    <message>
        <source>That run&apos;s record has no settings to start from: %1</source>
        <translation>Die Aufzeichnung dieses Laufs enthält keine Einstellungen, von denen aus gestartet werden kann: %1</translation>
    </message>
    <message>
        <source>This machine finished its work for %1 before its first step.</source>
        <translation>Dieser Rechner hat seine Arbeit für %1 vor seinem ersten Schritt beendet.</translation>
    </message>
    <message>
        <source>%1 stopped lending itself to this run. Its share goes to the others.</source>
        <translation>%1 leiht sich diesem Lauf nicht mehr. Sein Anteil geht an die anderen.</translation>
    </message>
    <message>
        <source>Notes…</source>
        <translation>Notizen…</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>Vergleichen</translation>
    </message>
    <message>
        <source>Choose two or more runs (Ctrl+click) to see their curves and settings side by side.</source>
        <translation>Wählen Sie zwei oder mehr Läufe (Strg+Klick), um ihre Kurven und Einstellungen nebeneinander zu sehen.</translation>
    </message>
    <message>
        <source>Notes on %1</source>
        <translation>Notizen zu %1</translation>
    </message>
    <message>
        <source>What to remember of this run (shown in History and when comparing runs):</source>
        <translation>Was Sie sich zu diesem Lauf merken möchten (im Verlauf und beim Vergleichen gezeigt):</translation>
    </message>
    <message>
        <source>%1 unpaired this machine. To train together again, pair the two (Machines → Set up pairing).</source>
        <translation>%1 hat die Kopplung mit diesem Rechner aufgehoben. Um wieder gemeinsam zu trainieren, koppeln Sie die beiden erneut (Rechner → Kopplung einrichten).</translation>
    </message>
    <message>
        <source>Exported to %1.</source>
        <translation>Exportiert nach %1.</translation>
    </message>
    <message>
        <source>Ollama is not installed on this machine; where it is: %1. LM Studio and llama.cpp open the file as it is.</source>
        <translation>Ollama ist auf diesem Rechner nicht installiert; wo es installiert ist: %1. LM Studio und llama.cpp öffnen die Datei, wie sie ist.</translation>
    </message>
    <message>
        <source>Added to Ollama as %1: ollama run %1</source>
        <translation>Zu Ollama hinzugefügt als %1: ollama run %1</translation>
    </message>
    <message>
        <source>Ollama could not add it (%1). By hand: %2</source>
        <translation>Ollama konnte es nicht hinzufügen (%1). Von Hand: %2</translation>
    </message>
    <message>
        <source>Adding it to Ollama as %1…</source>
        <translation>Wird zu Ollama hinzugefügt als %1…</translation>
    </message>
</context>
<context>
    <name>tandem::ui::PeerModel</name>
    <message>
        <source>Machine</source>
        <translation>Rechner</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>Geräte</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>Rolle</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>Samples/s</translation>
    </message>
    <message>
        <source>Device ID %1
%2
Tandem %3</source>
        <translation>Geräte-ID %1
%2
Tandem %3</translation>
    </message>
    <message>
        <source>%1 (this machine)</source>
        <translation>%1 (dieser Rechner)</translation>
    </message>
    <message>
        <source>Online</source>
        <translation>Online</translation>
    </message>
    <message>
        <source>Offline</source>
        <translation>Offline</translation>
    </message>
    <message>
        <source>Online, paired</source>
        <translation>Online, gekoppelt</translation>
    </message>
    <message>
        <source>Online, not paired</source>
        <translation>Online, nicht gekoppelt</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>Untätig</translation>
    </message>
    <message>
        <source>Coordinator</source>
        <translation>Koordinator</translation>
    </message>
    <message>
        <source>Coordinator and worker</source>
        <translation>Koordinator und Worker</translation>
    </message>
    <message>
        <source>Idle: would slow the run (%1 ms a step before its first sample, against a %2 ms step)</source>
        <translation>Untätig: würde den Lauf verlangsamen (%1 ms je Schritt vor seinem ersten Sample, gegenüber einem Schritt von %2 ms)</translation>
    </message>
    <message>
        <source>Idle: slowed the run (its steps took %1 ms, against %2 ms without it)</source>
        <translation>Untätig: hat den Lauf verlangsamt (seine Schritte dauerten %1 ms, gegenüber %2 ms ohne ihn)</translation>
    </message>
    <message>
        <source>The run measures it again after a few dozen steps, then less often while it would still slow the run, and gives it a share again when it would make steps shorter: when its load lifts, its link gets faster, or the batch grows.</source>
        <translation>Der Lauf misst ihn nach einigen Dutzend Schritten erneut, danach seltener, solange er den Lauf noch verlangsamen würde, und gibt ihm wieder einen Anteil, sobald er die Schritte verkürzen würde: wenn seine Last nachlässt, seine Verbindung schneller wird oder der Batch wächst.</translation>
    </message>
    <message>
        <source>Worker</source>
        <translation>Worker</translation>
    </message>
    <message>
        <source>Online, but its Tandem %1 cannot work with this one: install the same version on both</source>
        <translation>Online, aber sein Tandem %1 kann nicht mit diesem zusammenarbeiten: Installieren Sie auf beiden dieselbe Version</translation>
    </message>
    <message>
        <source>Device ID</source>
        <translation>Geräte-ID</translation>
    </message>
    <message>
        <source>This machine&apos;s part of each step&apos;s samples, as the run assigns them: the machine that lends its device shows the same figure</source>
        <translation>Der Anteil dieses Rechners an den Beispielen jedes Schritts, wie der Lauf sie zuteilt: der leihende Rechner zeigt dieselbe Zahl</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>Anteil</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>Token/s</translation>
    </message>
    <message>
        <source>In a sharded run: which range of the trainable values this machine owns, what it keeps for it (the fp32 weights, the optimizer&apos;s state and the gradients&apos; sum), and the bytes its links sent and received in the last step</source>
        <translation>In einem aufgeteilten Lauf (--shard): welchen Bereich der trainierbaren Werte diese Maschine besitzt, was sie dafür hält (die fp32-Gewichte, den Zustand des Optimierers und die Summe der Gradienten) und die Bytes, die ihre Verbindungen im letzten Schritt gesendet und empfangen haben</translation>
    </message>
    <message>
        <source>Shard</source>
        <translation>Shard</translation>
    </message>
    <message>
        <source>%1 of %2, %3, %4 a step</source>
        <translation>%1 von %2, %3, %4 je Schritt</translation>
    </message>
    <message>
        <source>%1 of %2, %3</source>
        <translation>%1 von %2, %3</translation>
    </message>
</context>
<context>
    <name>tandem::ui::RunForm</name>
    <message>
        <source>Text file (bytes, or a Hugging Face model&apos;s tokenizer)</source>
        <translation>Textdatei (Bytes, oder der Tokenizer eines Hugging-Face-Modells)</translation>
    </message>
    <message>
        <source>JSON Lines of documents (&quot;text&quot; a line; a Hugging Face model)</source>
        <translation>JSON Lines mit Dokumenten (&quot;text&quot; je Zeile; ein Hugging-Face-Modell)</translation>
    </message>
    <message>
        <source>Chat conversations (JSON Lines of &quot;messages&quot;; a Hugging Face model)</source>
        <translation>Chat-Gespräche (JSON Lines mit &quot;messages&quot;; ein Hugging-Face-Modell)</translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl *.json);;All files (*)</source>
        <translation>JSON Lines (*.jsonl *.json);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>A Hugging Face folder… (%1)</source>
        <translation>Ein Hugging-Face-Ordner… (%1)</translation>
    </message>
    <message>
        <source>empty: train every weight</source>
        <translation>leer: alle Gewichte trainieren</translation>
    </message>
    <message>
        <source>Low-rank adapters: only they train, the model&apos;s own weights stay frozen. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</source>
        <translation>Low-Rank-Adapter: nur sie werden trainiert, die Gewichte des Modells bleiben eingefroren. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</translation>
    </message>
    <message>
        <source>Recompute activations (less memory, more time)</source>
        <translation>Aktivierungen neu berechnen (weniger Speicher, mehr Zeit)</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>Adapter (LoRA)</translation>
    </message>
    <message>
        <source>a folder with config.json and model.safetensors</source>
        <translation>ein Ordner mit config.json und model.safetensors</translation>
    </message>
    <message>
        <source>Choose a Hugging Face model folder</source>
        <translation>Hugging-Face-Modellordner wählen</translation>
    </message>
    <message>
        <source>Choose the Hugging Face model&apos;s folder.</source>
        <translation>Wählen Sie den Ordner des Hugging-Face-Modells.</translation>
    </message>
    <message>
        <source>mnist-cnn: convolutional network for 28×28 images</source>
        <translation>mnist-cnn: Faltungsnetz für 28×28-Bilder</translation>
    </message>
    <message>
        <source>mlp: small fully connected network</source>
        <translation>mlp: kleines vollständig verbundenes Netz</translation>
    </message>
    <message>
        <source>resnet8: small ResNet for 32×32 colour images</source>
        <translation>resnet8: kleines ResNet für 32×32-Farbbilder</translation>
    </message>
    <message>
        <source>Your TorchScript file…</source>
        <translation>Eigene TorchScript-Datei…</translation>
    </message>
    <message>
        <source>model.pt saved with torch.jit.save</source>
        <translation>model.pt, gespeichert mit torch.jit.save</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>Auswählen…</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>Fashion-MNIST (built in)</source>
        <translation>Fashion-MNIST (eingebaut)</translation>
    </message>
    <message>
        <source>Fashion-MNIST folder (IDX files)</source>
        <translation>Fashion-MNIST-Ordner (IDX-Dateien)</translation>
    </message>
    <message>
        <source>MNIST folder (IDX files)</source>
        <translation>MNIST-Ordner (IDX-Dateien)</translation>
    </message>
    <message>
        <source>CIFAR-10 folder (binary version)</source>
        <translation>CIFAR-10-Ordner (Binärversion)</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>Datensatz</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>Rechner</translation>
    </message>
    <message>
        <source>Synchronous: one model, exact (best on a fast network)</source>
        <translation>Synchron: ein Modell, exakt (am besten bei schnellem Netzwerk)</translation>
    </message>
    <message>
        <source>Asynchronous: no waiting for the slowest machine</source>
        <translation>Asynchron: kein Warten auf den langsamsten Rechner</translation>
    </message>
    <message>
        <source>Local SGD: several local steps per exchange (slow networks)</source>
        <translation>Lokales SGD: mehrere lokale Schritte je Austausch (langsame Netzwerke)</translation>
    </message>
    <message>
        <source>Automatic: measures the network, then synchronous or streaming</source>
        <translation>Automatisch: misst das Netzwerk, dann synchron oder Streaming</translation>
    </message>
    <message>
        <source>Streaming local SGD: exchanges overlap training (Wi-Fi)</source>
        <translation>Streaming-SGD: Austausch läuft parallel zum Training (WLAN)</translation>
    </message>
    <message>
        <source>8-bit blocks (a quarter of the traffic)</source>
        <translation>8-Bit-Blöcke (ein Viertel des Datenverkehrs)</translation>
    </message>
    <message>
        <source>4-bit blocks (an eighth of the traffic)</source>
        <translation>4-Bit-Blöcke (ein Achtel des Datenverkehrs)</translation>
    </message>
    <message>
        <source>Local SGD updates</source>
        <translation>Updates des lokalen SGD</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>Modus</translation>
    </message>
    <message>
        <source>32-bit floats (exact)</source>
        <translation>32-Bit-Gleitkomma (exakt)</translation>
    </message>
    <message>
        <source>16-bit floats (half the traffic)</source>
        <translation>16-Bit-Gleitkomma (halber Datenverkehr)</translation>
    </message>
    <message>
        <source>bfloat16 (half the traffic, wider range)</source>
        <translation>bfloat16 (halber Datenverkehr, größerer Wertebereich)</translation>
    </message>
    <message>
        <source>Wire precision</source>
        <translation>Übertragungsgenauigkeit</translation>
    </message>
    <message>
        <source>Device on this machine</source>
        <translation>Gerät auf diesem Rechner</translation>
    </message>
    <message>
        <source>Best available: %1</source>
        <translation>Das beste verfügbare: %1</translation>
    </message>
    <message>
        <source>Compute precision</source>
        <translation>Rechengenauigkeit</translation>
    </message>
    <message>
        <source>bfloat16 autocast (faster on recent CPUs and GPUs)</source>
        <translation>bfloat16-Autocast (schneller auf neueren CPUs und GPUs)</translation>
    </message>
    <message>
        <source>16-bit autocast (NVIDIA and Apple GPUs)</source>
        <translation>16-Bit-Autocast (GPUs von NVIDIA und Apple)</translation>
    </message>
    <message>
        <source>SGD with momentum</source>
        <translation>SGD mit Momentum</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>Optimierer</translation>
    </message>
    <message>
        <source>constant</source>
        <translation>konstant</translation>
    </message>
    <message>
        <source>cosine decay</source>
        <translation>Kosinus-Abfall</translation>
    </message>
    <message>
        <source>warm-up steps: </source>
        <translation>Aufwärmschritte: </translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>Lernrate</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>Epochen</translation>
    </message>
    <message>
        <source>Batch (all machines)</source>
        <translation>Batch (alle Rechner)</translation>
    </message>
    <message>
        <source>a folder</source>
        <translation>ein Ordner</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation>%1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>%1 is not a run description: %2</source>
        <translation>%1 ist keine Laufbeschreibung: %2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Choose a TorchScript model</source>
        <translation>TorchScript-Modell auswählen</translation>
    </message>
    <message>
        <source>TorchScript (*.pt *.pth);;All files (*)</source>
        <translation>TorchScript (*.pt *.pth);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>Choose the dataset folder</source>
        <translation>Datensatzordner auswählen</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>Modell und Datensatz werden geprüft…</translation>
    </message>
    <message>
        <source>Choose a TorchScript file for the model.</source>
        <translation>Wählen Sie eine TorchScript-Datei für das Modell.</translation>
    </message>
    <message>
        <source>Choose where the dataset is.</source>
        <translation>Wählen Sie, wo der Datensatz liegt.</translation>
    </message>
    <message>
        <source>Check model and data</source>
        <translation>Modell und Daten prüfen</translation>
    </message>
    <message>
        <source>gpt: small language model over the bytes of a text</source>
        <translation>gpt: kleines Sprachmodell über die Bytes eines Textes</translation>
    </message>
    <message>
        <source>CSV file (label= or target= column and numbers)</source>
        <translation>CSV-Datei (Spalte label= oder target= und Zahlen)</translation>
    </message>
    <message>
        <source>Token file (nanoGPT .bin)</source>
        <translation>Token-Datei (nanoGPT .bin)</translation>
    </message>
    <message>
        <source>NumPy arrays (.npz with x_train, y_train)</source>
        <translation>NumPy-Arrays (.npz mit x_train, y_train)</translation>
    </message>
    <message>
        <source>Image folder (one subfolder per class)</source>
        <translation>Bildordner (ein Unterordner je Klasse)</translation>
    </message>
    <message>
        <source>Automatic: from the model&apos;s output and the data</source>
        <translation>Automatisch: aus der Ausgabe des Modells und den Daten</translation>
    </message>
    <message>
        <source>Cross-entropy (classes, next token)</source>
        <translation>Kreuzentropie (Klassen, nächstes Token)</translation>
    </message>
    <message>
        <source>Mean squared error (regression)</source>
        <translation>Mittlerer quadratischer Fehler (Regression)</translation>
    </message>
    <message>
        <source>Mean absolute error (regression)</source>
        <translation>Mittlerer absoluter Fehler (Regression)</translation>
    </message>
    <message>
        <source>Huber (regression with outliers)</source>
        <translation>Huber (Regression mit Ausreißern)</translation>
    </message>
    <message>
        <source>Binary cross-entropy (several labels each)</source>
        <translation>Binäre Kreuzentropie (mehrere Labels je Beispiel)</translation>
    </message>
    <message>
        <source>The model&apos;s own loss() method</source>
        <translation>Die eigene loss()-Methode des Modells</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>Verlust</translation>
    </message>
    <message>
        <source>a .csv file[,target=COLUMN to predict a number]</source>
        <translation>eine .csv-Datei[,target=SPALTE, um eine Zahl vorherzusagen]</translation>
    </message>
    <message>
        <source>a text file[,context=256]</source>
        <translation>eine Textdatei[,context=256]</translation>
    </message>
    <message>
        <source>a .bin file[,dtype=uint16][,context=256]</source>
        <translation>eine .bin-Datei[,dtype=uint16][,context=256]</translation>
    </message>
    <message>
        <source>a folder of class folders[,size=64]</source>
        <translation>ein Ordner mit Klassenordnern[,size=64]</translation>
    </message>
    <message>
        <source>a file</source>
        <translation>eine Datei</translation>
    </message>
    <message>
        <source>Choose the dataset file</source>
        <translation>Datensatzdatei wählen</translation>
    </message>
    <message>
        <source>CSV (*.csv);;All files (*)</source>
        <translation>CSV (*.csv);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>Text (*.txt *.md);;All files (*)</source>
        <translation>Text (*.txt *.md);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>Token files (*.bin);;All files (*)</source>
        <translation>Token-Dateien (*.bin);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>NumPy (*.npz);;All files (*)</source>
        <translation>NumPy (*.npz);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>all of them</source>
        <translation>alle</translation>
    </message>
    <message>
        <source>Train on the first N training samples only; 0 uses them all.</source>
        <translation>Nur mit den ersten N Trainings-Samples trainieren; 0 nimmt alle.</translation>
    </message>
    <message>
        <source>Training samples</source>
        <translation>Trainings-Samples</translation>
    </message>
    <message>
        <source>Base as stored</source>
        <translation>Basis wie gespeichert</translation>
    </message>
    <message>
        <source>Base in 8 bits</source>
        <translation>Basis in 8 Bit</translation>
    </message>
    <message>
        <source>Base in 4 bits (QLoRA)</source>
        <translation>Basis in 4 Bit (QLoRA)</translation>
    </message>
    <message>
        <source>The frozen model&apos;s own weights in 4 bits (nf4) take about a quarter of bf16&apos;s memory: a 7-8B model fits a 12 GB card</source>
        <translation>Die eingefrorenen Gewichte des Modells in 4 Bit (nf4) brauchen etwa ein Viertel des Speichers von bf16: ein 7–8B-Modell passt auf eine 12-GB-Karte</translation>
    </message>
    <message>
        <source>No</source>
        <translation>Nein</translation>
    </message>
    <message>
        <source>Q4_K_M: smallest, about 4.9 bits a weight</source>
        <translation>Q4_K_M: am kleinsten, etwa 4,9 Bit je Gewicht</translation>
    </message>
    <message>
        <source>Q8_0: 8.5 bits a weight, close to the original</source>
        <translation>Q8_0: 8,5 Bit je Gewicht, nah am Original</translation>
    </message>
    <message>
        <source>F16: 16 bits, as trained</source>
        <translation>F16: 16 Bit, wie trainiert</translation>
    </message>
    <message>
        <source>BF16: 16 bits, as trained</source>
        <translation>BF16: 16 Bit, wie trainiert</translation>
    </message>
    <message>
        <source>At the end of the run, also write model.gguf and model.Modelfile in the run&apos;s folder: `ollama create NAME -f model.Modelfile` adds it to Ollama, and LM Studio and llama.cpp open model.gguf as it is</source>
        <translation>Am Ende des Laufs zusätzlich model.gguf und model.Modelfile in den Ordner des Laufs schreiben: `ollama create NAME -f model.Modelfile` fügt es Ollama hinzu, LM Studio und llama.cpp öffnen model.gguf direkt</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>Für Ollama / llama.cpp exportieren</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> Token</translation>
    </message>
    <message>
        <source>How many tokens the model sees at once: each training window holds this many, and predicts each next one.</source>
        <translation>Wie viele Token das Modell auf einmal sieht: Jedes Trainingsfenster enthält so viele und sagt jeweils das nächste voraus.</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>Kontext</translation>
    </message>
    <message>
        <source>= %1 tokens a step</source>
        <translation>= %1 Token pro Schritt</translation>
    </message>
    <message>
        <source>Batch set to %1 for this data; set it yourself to keep another.</source>
        <translation>Batch für diese Daten auf %1 gesetzt; setzen Sie ihn selbst, um einen anderen zu behalten.</translation>
    </message>
    <message>
        <source>Preference pairs (JSON Lines of &quot;prompt&quot;, &quot;chosen&quot; and &quot;rejected&quot;; a Hugging Face model)</source>
        <translation>Präferenzpaare (JSON Lines mit &quot;prompt&quot;, &quot;chosen&quot; und &quot;rejected&quot;; ein Hugging-Face-Modell)</translation>
    </message>
    <message>
        <source>DPO (preference pairs; LoRA adapters, whose base is the reference)</source>
        <translation>DPO (Präferenzpaare; LoRA-Adapter, deren Basis die Referenz ist)</translation>
    </message>
    <message>
        <source>ORPO (preference pairs; no reference model)</source>
        <translation>ORPO (Präferenzpaare; kein Referenzmodell)</translation>
    </message>
    <message>
        <source>DPO&apos;s β: how far the model may move from the reference. ORPO&apos;s λ: the weight of the preference term beside the chosen answer&apos;s loss.</source>
        <translation>β bei DPO: wie weit sich das Modell von der Referenz entfernen darf. λ bei ORPO: das Gewicht des Präferenzterms neben dem Verlust der gewählten Antwort.</translation>
    </message>
    <message>
        <source>Preference strength (β, λ)</source>
        <translation>Präferenzstärke (β, λ)</translation>
    </message>
    <message>
        <source>The layers that get adapters. Checked at first: those the model&apos;s family adapts by default.</source>
        <translation>Die Schichten, die Adapter bekommen. Anfangs angehakt: die, die die Modellfamilie standardmäßig anpasst.</translation>
    </message>
    <message>
        <source>Adapted layers</source>
        <translation>Angepasste Schichten</translation>
    </message>
    <message>
        <source>Preview…</source>
        <translation>Vorschau…</translation>
    </message>
    <message>
        <source>The first conversations as the model will read them, the tokens that train, the lengths against the context, and any line that cannot be read.</source>
        <translation>Die ersten Gespräche so, wie das Modell sie lesen wird, die Token, die trainiert werden, die Längen im Vergleich zum Kontext und jede Zeile, die nicht gelesen werden kann.</translation>
    </message>
    <message>
        <source>From the Hub…</source>
        <translation>Aus dem Hub…</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub and download a model, or choose one already downloaded</source>
        <translation>Im Hugging Face Hub suchen und ein Modell herunterladen, oder ein bereits heruntergeladenes wählen</translation>
    </message>
    <message>
        <source>optional: how History will name this run</source>
        <translation>optional: wie der Verlauf diesen Lauf nennt</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Split the weights and the optimizer across the machines</source>
        <translation>Gewichte und Optimierer auf die Maschinen aufteilen</translation>
    </message>
    <message>
        <source>Each machine keeps one range of the fp32 weights, of the optimizer&apos;s state and of the gradients&apos; sum, and steps it itself: a full fine-tune can then need more memory than any one machine has. For synchronous and local SGD runs that train every weight, on more than one machine.</source>
        <translation>Jede Maschine hält einen Bereich der fp32-Gewichte, des Optimiererzustands und der Gradientensumme und führt dessen Schritt selbst aus: Ein volles Fine-Tuning kann dann mehr Speicher brauchen, als eine einzelne Maschine hat. Für synchrone Läufe und Läufe mit lokalem SGD, die jedes Gewicht trainieren, auf mehr als einer Maschine.</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SettingsDialog</name>
    <message>
        <source>Choose…</source>
        <translation>Auswählen…</translation>
    </message>
    <message>
        <source>Choose a folder</source>
        <translation>Ordner auswählen</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>Systemsprache</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Sprache</translation>
    </message>
    <message>
        <source>this computer&apos;s host name</source>
        <translation>der Hostname dieses Computers</translation>
    </message>
    <message>
        <source>Machine name</source>
        <translation>Rechnername</translation>
    </message>
    <message>
        <source>Discovery port (UDP)</source>
        <translation>Discovery-Port (UDP)</translation>
    </message>
    <message>
        <source>Pairing port (TCP)</source>
        <translation>Kopplungsport (TCP)</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>beliebiger freier Port</translation>
    </message>
    <message>
        <source>Training port (TCP)</source>
        <translation>Trainingsport (TCP)</translation>
    </message>
    <message>
        <source>Runs folder</source>
        <translation>Ordner für Läufe</translation>
    </message>
    <message>
        <source>Dataset cache</source>
        <translation>Datensatz-Cache</translation>
    </message>
    <message>
        <source>none: base models are received</source>
        <translation>keiner: Basismodelle werden empfangen</translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation>Modellordner</translation>
    </message>
    <message>
        <source>Train for paired machines while this one is idle</source>
        <translation>Für gekoppelte Rechner trainieren, während dieser untätig ist</translation>
    </message>
    <message>
        <source>A new language or new ports take effect when Tandem starts again.</source>
        <translation>Eine neue Sprache oder neue Ports gelten ab dem nächsten Start von Tandem.</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SetupWizard</name>
    <message>
        <source>This machine</source>
        <translation>Dieser Rechner</translation>
    </message>
    <message>
        <source>Tandem trains on every device listed here. Other machines will see this machine under its name.</source>
        <translation>Tandem trainiert auf jedem hier aufgeführten Gerät. Andere Rechner sehen diesen Rechner unter seinem Namen.</translation>
    </message>
    <message>
        <source>Devices:</source>
        <translation>Geräte:</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>Name:</translation>
    </message>
    <message>
        <source>Device ID: %1</source>
        <translation>Geräte-ID: %1</translation>
    </message>
    <message>
        <source>Find your other machine</source>
        <translation>Den anderen Rechner finden</translation>
    </message>
    <message>
        <source>Start Tandem on the other machine too. Machines on this network appear below; choose one and press Next.</source>
        <translation>Starten Sie Tandem auch auf dem anderen Rechner. Rechner in diesem Netzwerk erscheinen unten; wählen Sie einen und drücken Sie Weiter.</translation>
    </message>
    <message>
        <source>IP address or host name</source>
        <translation>IP-Adresse oder Hostname</translation>
    </message>
    <message>
        <source>Add by address</source>
        <translation>Über Adresse hinzufügen</translation>
    </message>
    <message>
        <source>Nothing yet? Check that Tandem runs on the other machine and that both are on the same network. Firewalls must allow UDP port 47300 and TCP port 47301. On a Mac, allow Tandem under System Settings → Privacy &amp; Security → Local Network. Some Wi-Fi networks block discovery: then add the other machine by its address.</source>
        <translation>Noch nichts? Prüfen Sie, ob Tandem auf dem anderen Rechner läuft und beide im selben Netzwerk sind. Firewalls müssen UDP-Port 47300 und TCP-Port 47301 erlauben. Auf einem Mac erlauben Sie Tandem unter Systemeinstellungen → Datenschutz &amp; Sicherheit → Lokales Netzwerk. Manche WLANs blockieren die Suche: Fügen Sie den anderen Rechner dann über seine Adresse hinzu.</translation>
    </message>
    <message>
        <source>To train on this machine alone, press Next without choosing a machine.</source>
        <translation>Um nur auf diesem Rechner zu trainieren, drücken Sie Weiter, ohne einen Rechner zu wählen.</translation>
    </message>
    <message>
        <source>Pair</source>
        <translation>Koppeln</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>Die Codes stimmen überein</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>Die Codes sind verschieden</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <source>Check that %1 shows the same code:</source>
        <translation>Prüfen Sie, ob %1 denselben Code zeigt:</translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>Verbinde mit %1…</translation>
    </message>
    <message>
        <source>Waiting for the other machine to confirm…</source>
        <translation>Warte auf die Bestätigung des anderen Rechners…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>Wird abgebrochen…</translation>
    </message>
    <message>
        <source>Paired with %1.</source>
        <translation>Mit %1 gekoppelt.</translation>
    </message>
    <message>
        <source>Press Next.</source>
        <translation>Drücken Sie Weiter.</translation>
    </message>
    <message>
        <source>Nobody answered in time.</source>
        <translation>Niemand hat rechtzeitig geantwortet.</translation>
    </message>
    <message>
        <source>Press Try again, and confirm the code on both machines within a minute.</source>
        <translation>Drücken Sie „Erneut versuchen“ und bestätigen Sie den Code auf beiden Rechnern innerhalb einer Minute.</translation>
    </message>
    <message>
        <source>You said the codes differ. Nothing was paired.</source>
        <translation>Sie haben angegeben, dass die Codes verschieden sind. Es wurde nichts gekoppelt.</translation>
    </message>
    <message>
        <source>The other machine said the codes differ. Nothing was paired.</source>
        <translation>Der andere Rechner hat angegeben, dass die Codes verschieden sind. Es wurde nichts gekoppelt.</translation>
    </message>
    <message>
        <source>Codes that differ can mean that another device is answering in place of your machine. Check that you chose the right machine, then try again.</source>
        <translation>Verschiedene Codes können bedeuten, dass ein anderes Gerät an Stelle Ihres Rechners antwortet. Prüfen Sie, ob Sie den richtigen Rechner gewählt haben, und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>The other machine refused.</source>
        <translation>Der andere Rechner hat abgelehnt.</translation>
    </message>
    <message>
        <source>It may be busy or have refused several attempts: wait a minute and try again.</source>
        <translation>Er ist vielleicht beschäftigt oder hat mehrere Versuche abgewiesen: Warten Sie eine Minute und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>Could not reach the other machine.</source>
        <translation>Der andere Rechner ist nicht erreichbar.</translation>
    </message>
    <message>
        <source>Check that Tandem is running there and that its firewall allows TCP port 47301.</source>
        <translation>Prüfen Sie, ob Tandem dort läuft und seine Firewall TCP-Port 47301 erlaubt.</translation>
    </message>
    <message>
        <source>Pairing failed.</source>
        <translation>Kopplung fehlgeschlagen.</translation>
    </message>
    <message>
        <source>Try again. If this repeats, see Troubleshooting in the user guide.</source>
        <translation>Versuchen Sie es erneut. Wenn das wieder passiert, lesen Sie „Fehlerbehebung“ im Benutzerhandbuch.</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <source>%1 and %2 are paired. They find each other on this network from now on; Tandem shares the training between them.</source>
        <translation>%1 und %2 sind gekoppelt. Sie finden sich ab jetzt in diesem Netzwerk; Tandem verteilt das Training auf beide.</translation>
    </message>
    <message>
        <source>%1 is ready to train on its own. You can pair another machine at any time from Machines → Set up pairing.</source>
        <translation>%1 ist bereit, allein zu trainieren. Einen weiteren Rechner können Sie jederzeit unter Rechner → Kopplung einrichten koppeln.</translation>
    </message>
    <message>
        <source>Press Finish to open the dashboard. Its New run tab is set up for the demo (mnist-cnn on Fashion-MNIST): press Start.</source>
        <translation>Drücken Sie Fertigstellen, um das Dashboard zu öffnen. Sein Reiter „Neuer Lauf“ ist für die Demo eingerichtet (mnist-cnn auf Fashion-MNIST): Starten drücken.</translation>
    </message>
    <message>
        <source>Set up Tandem</source>
        <translation>Tandem einrichten</translation>
    </message>
    <message>
        <source>Finish</source>
        <translation>Fertigstellen</translation>
    </message>
    <message>
        <source>&lt; &amp;Back</source>
        <translation>&lt; &amp;Zurück</translation>
    </message>
    <message>
        <source>&amp;Next &gt;</source>
        <translation>&amp;Weiter &gt;</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Both machines show a code. When the codes are the same, no other device sits between the two.</source>
        <translation>Beide Rechner zeigen einen Code. Sind die Codes gleich, sitzt kein anderes Gerät zwischen den beiden.</translation>
    </message>
    <message>
        <source>What was set up, and what comes next.</source>
        <translation>Was eingerichtet wurde, und wie es weitergeht.</translation>
    </message>
    <message>
        <source>%1 and %2 are paired: %2 asked, and you confirmed the code here.</source>
        <translation>%1 und %2 sind gekoppelt: %2 hat angefragt, und Sie haben den Code hier bestätigt.</translation>
    </message>
    <message>
        <source>Runs started on %1 can now use this machine&apos;s devices. Keep Tandem open here: the dashboard shows the run while this machine takes part, with Stop lending to leave it. You can also start runs from here.</source>
        <translation>Auf %1 gestartete Läufe können jetzt die Geräte dieses Rechners nutzen. Lassen Sie Tandem hier geöffnet: Das Dashboard zeigt den Lauf, solange dieser Rechner mitarbeitet, und „Verleihen beenden“ steigt aus. Sie können auch von hier aus Läufe starten.</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SweepTab</name>
    <message>
        <source>A sweep description (JSON): a run with a &quot;sweep&quot; object</source>
        <translation>Eine Sweep-Beschreibung (JSON): ein Lauf mit einem „sweep“-Objekt</translation>
    </message>
    <message>
        <source>Open…</source>
        <translation>Öffnen…</translation>
    </message>
    <message>
        <source>Where the trials&apos; run folders and sweep.jsonl go</source>
        <translation>Wohin die Laufordner der Versuche und sweep.jsonl geschrieben werden</translation>
    </message>
    <message>
        <source>Paired machines run trials too</source>
        <translation>Gekoppelte Rechner führen auch Versuche aus</translation>
    </message>
    <message>
        <source>Start sweep</source>
        <translation>Sweep starten</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <source>Continue the sweep in this folder: finished trials are kept, interrupted ones resume from their checkpoints</source>
        <translation>Den Sweep in diesem Ordner fortsetzen: abgeschlossene Versuche bleiben, unterbrochene machen an ihrem Checkpoint weiter</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stoppen</translation>
    </message>
    <message>
        <source>Export best…</source>
        <translation>Beste exportieren…</translation>
    </message>
    <message>
        <source>Open a sweep file to start.</source>
        <translation>Öffnen Sie eine Sweep-Datei, um zu beginnen.</translation>
    </message>
    <message>
        <source>Trial</source>
        <translation>Versuch</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>Parameter</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>Sweep file</source>
        <translation>Sweep-Datei</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>Ordner</translation>
    </message>
    <message>
        <source>Parameter</source>
        <translation>Parameter</translation>
    </message>
    <message>
        <source>Open a sweep description</source>
        <translation>Sweep-Beschreibung öffnen</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>This sweep file cannot be used: %1</source>
        <translation>Diese Sweep-Datei ist nicht verwendbar: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n trial(s), %1, searching %2. Results go to the folder above.</source>
        <translation>
            <numerusform>%n Versuch, %1, durchsucht %2. Die Ergebnisse kommen in den Ordner oben.</numerusform>
            <numerusform>%n Versuche, %1, durchsucht %2. Die Ergebnisse kommen in den Ordner oben.</numerusform>
        </translation>
    </message>
    <message>
        <source>That folder already holds a sweep: press Continue to go on with it, or choose another folder.</source>
        <translation>Dieser Ordner enthält schon einen Sweep: Mit „Fortsetzen“ geht er weiter, oder wählen Sie einen anderen Ordner.</translation>
    </message>
    <message>
        <source>Cannot continue: %1</source>
        <translation>Fortsetzen nicht möglich: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>%n Epoche</numerusform>
            <numerusform>%n Epochen</numerusform>
        </translation>
    </message>
    <message>
        <source>test loss</source>
        <translation>Testverlust</translation>
    </message>
    <message>
        <source>test accuracy</source>
        <translation>Testgenauigkeit</translation>
    </message>
    <message>
        <source>Every trial</source>
        <translation>Alle Versuche</translation>
    </message>
    <message>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <source>The sweep did not start: %1</source>
        <translation>Der Sweep ist nicht gestartet: %1</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>wartet</translation>
    </message>
    <message>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <source>waiting for promotion</source>
        <translation>wartet auf Beförderung</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>abgeschlossen</translation>
    </message>
    <message>
        <source>stopped early</source>
        <translation>früh gestoppt</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>trial %1</source>
        <translation>Versuch %1</translation>
    </message>
    <message>
        <source>%1 (log10)</source>
        <translation>%1 (log10)</translation>
    </message>
    <message>
        <source>%1 against %2</source>
        <translation>%1 nach %2</translation>
    </message>
    <message>
        <source>trials</source>
        <translation>Versuche</translation>
    </message>
    <message>
        <source>best</source>
        <translation>beste</translation>
    </message>
    <message numerus="yes">
        <source>Finished: %n trial(s) in %1 s.</source>
        <translation>
            <numerusform>Abgeschlossen: %n Versuch in %1 s.</numerusform>
            <numerusform>Abgeschlossen: %n Versuche in %1 s.</numerusform>
        </translation>
    </message>
    <message>
        <source>Stopped; Continue resumes it from the checkpoints.</source>
        <translation>Gestoppt; „Fortsetzen“ macht an den Checkpoints weiter.</translation>
    </message>
    <message>
        <source>Best: trial %1 (%2), %3.</source>
        <translation>Bester: Versuch %1 (%2), %3.</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n trial(s) started; running: %2; devices: %3.</source>
        <translation>
            <numerusform>%1 von %n Versuch gestartet; laufend: %2; Geräte: %3.</numerusform>
            <numerusform>%1 von %n Versuchen gestartet; laufend: %2; Geräte: %3.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::TryDialog</name>
    <message>
        <source> tokens</source>
        <translation> Tokens</translation>
    </message>
    <message>
        <source>Only the likeliest tokens that together make up this much probability are drawn from.</source>
        <translation>Gezogen wird nur aus den wahrscheinlichsten Tokens, die zusammen diese Wahrscheinlichkeit ausmachen.</translation>
    </message>
    <message>
        <source>Tuned</source>
        <translation>Feinabgestimmt</translation>
    </message>
    <message>
        <source>Reference: the model before tuning</source>
        <translation>Referenz: das Modell vor dem Feinabstimmen</translation>
    </message>
    <message>
        <source>Answer as in a chat</source>
        <translation>Wie im Chat antworten</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stopp</translation>
    </message>
    <message>
        <source>Try %1</source>
        <translation>%1 ausprobieren</translation>
    </message>
    <message>
        <source> bytes</source>
        <translation> Bytes</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>Länge</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <source>Could not generate: %1</source>
        <translation>Erzeugen fehlgeschlagen: %1</translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation>Wird erzeugt…</translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), %1 tokens/s</source>
        <translation>
            <numerusform>%n Token, %1 Token/s</numerusform>
            <numerusform>%n Token, %1 Token/s</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not generate.</source>
        <translation>Erzeugen fehlgeschlagen.</translation>
    </message>
    <message>
        <source>Stopped: %1.</source>
        <translation>Angehalten: %1.</translation>
    </message>
    <message>
        <source>Done: %1.</source>
        <translation>Fertig: %1.</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Senden</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>Neu erzeugen</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <source>A message for the model, or text to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>Eine Nachricht an das Modell oder ein Text zum Fortsetzen. Eingabe sendet; Umschalt+Eingabe beginnt eine neue Zeile.</translation>
    </message>
    <message>
        <source>Text for the model to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>Text, den das Modell fortsetzen soll. Eingabe sendet; Umschalt+Eingabe beginnt eine neue Zeile.</translation>
    </message>
    <message>
        <source>Optional: how the model should answer</source>
        <translation>Optional: wie das Modell antworten soll</translation>
    </message>
    <message>
        <source>Writes your messages with the model&apos;s chat template and shows the assistant&apos;s answers; off, the model continues your text.</source>
        <translation>Schreibt Ihre Nachrichten mit der Chatvorlage des Modells und zeigt die Antworten des Assistenten; aus: Das Modell setzt Ihren Text fort.</translation>
    </message>
    <message>
        <source>0 always takes the likeliest next token; higher values vary more.</source>
        <translation>0 nimmt immer das wahrscheinlichste nächste Token; höhere Werte variieren mehr.</translation>
    </message>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>Sie: %1</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
</context>
</TS>
