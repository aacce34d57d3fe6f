<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr">
<context>
    <name>Format</name>
    <message>
        <source>GPU %1 (CUDA): %2, %3</source>
        <translation>GPU %1 (CUDA) : %2, %3</translation>
    </message>
    <message>
        <source>Apple GPU (MPS): %1, %2 shared memory</source>
        <translation>GPU Apple (MPS) : %1, %2 de mémoire partagée</translation>
    </message>
    <message numerus="yes">
        <source>CPU: %1, %n core(s), %2 RAM</source>
        <translation>
            <numerusform>CPU : %1, %n cœur, %2 de RAM</numerusform>
            <numerusform>CPU : %1, %n cœurs, %2 de RAM</numerusform>
        </translation>
    </message>
    <message>
        <source>unknown model</source>
        <translation>modèle inconnu</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>Précision (%)</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>Perplexité</translation>
    </message>
    <message>
        <source>R²</source>
        <translation>R²</translation>
    </message>
    <message>
        <source>Test loss</source>
        <translation>Perte de test</translation>
    </message>
    <message>
        <source>not measured yet</source>
        <translation>pas encore mesurée</translation>
    </message>
    <message>
        <source>Reward accuracy (%)</source>
        <translation>Précision des récompenses (%)</translation>
    </message>
    <message>
        <source>held-out reward accuracy %1%</source>
        <translation>précision des récompenses sur les paires réservées %1 %</translation>
    </message>
    <message>
        <source>test accuracy %1%</source>
        <translation>précision de test %1 %</translation>
    </message>
    <message>
        <source>perplexity %1</source>
        <translation>perplexité %1</translation>
    </message>
    <message>
        <source>R² %1</source>
        <translation>R² %1</translation>
    </message>
    <message>
        <source>test loss %1</source>
        <translation>perte de test %1</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 jetons/s</translation>
    </message>
    <message>
        <source>%1 samples/s</source>
        <translation>%1 échantillons/s</translation>
    </message>
    <message>
        <source>perplexity %1, next-token accuracy %2%</source>
        <translation>perplexité %1, précision du token suivant %2 %</translation>
    </message>
</context>
<context>
    <name>tandem::ui::ChartPanel</name>
    <message>
        <source>this machine</source>
        <translation>cette machine</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>Perte d&apos;entraînement</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Étape</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>Perte</translation>
    </message>
    <message>
        <source>Loss per step</source>
        <translation>Perte par étape</translation>
    </message>
    <message>
        <source>Smoothed</source>
        <translation>Lissée</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>Précision</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>Époque</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>Précision (%)</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>Test</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>Entraînement</translation>
    </message>
    <message>
        <source>Throughput per worker</source>
        <translation>Débit par worker</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>Échantillons/s</translation>
    </message>
    <message>
        <source>Where each worker&apos;s time goes</source>
        <translation>Où passe le temps de chaque worker</translation>
    </message>
    <message>
        <source>Seconds</source>
        <translation>Secondes</translation>
    </message>
    <message>
        <source>Compute</source>
        <translation>Calcul</translation>
    </message>
    <message>
        <source>Communicate</source>
        <translation>Communication</translation>
    </message>
    <message>
        <source>Wait</source>
        <translation>Attente</translation>
    </message>
    <message>
        <source>Reward accuracy</source>
        <translation>Précision des récompenses</translation>
    </message>
    <message>
        <source>Loss, reward margin</source>
        <translation>Perte, écart de récompense</translation>
    </message>
    <message>
        <source>Reward margin</source>
        <translation>Écart de récompense</translation>
    </message>
    <message>
        <source>Held-out perplexity</source>
        <translation>Perplexité sur les données réservées</translation>
    </message>
    <message>
        <source>Held-out R²</source>
        <translation>R² sur les données réservées</translation>
    </message>
    <message>
        <source>Held-out loss</source>
        <translation>Perte sur les données réservées</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>Jetons/s</translation>
    </message>
</context>
<context>
    <name>tandem::ui::CompareDialog</name>
    <message numerus="yes">
        <source>Compare %n run(s)</source>
        <translation>
            <numerusform>Comparer %n entraînement</numerusform>
            <numerusform>Comparer %n entraînements</numerusform>
        </translation>
    </message>
    <message>
        <source>Training loss (smoothed)</source>
        <translation>Perte d&apos;entraînement (lissée)</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Étape</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>Perte</translation>
    </message>
    <message>
        <source>Held-out figure per epoch</source>
        <translation>Mesure sur les données réservées, par époque</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>Époque</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>Vitesse</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>Jetons/s</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>Échantillons/s</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>oui</translation>
    </message>
    <message>
        <source>no</source>
        <translation>non</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Nom</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>Démarré</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modèle</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>Jeu de données</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>Taux d&apos;apprentissage</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>Planification</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>Optimiseur</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>Époques</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>Lot</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>Adaptateurs (LoRA)</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>Mode</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>Machines</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>État</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>Résultat</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>Durée</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>Notes</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Fermer</translation>
    </message>
    <message>
        <source>Tokens or samples/s</source>
        <translation>Jetons ou échantillons/s</translation>
    </message>
</context>
<context>
    <name>tandem::ui::DataPreviewDialog</name>
    <message>
        <source>Reading the data…</source>
        <translation>Lecture des données…</translation>
    </message>
    <message>
        <source>Preview of the data</source>
        <translation>Aperçu des données</translation>
    </message>
    <message>
        <source>Tokens per document</source>
        <translation>Jetons par document</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>Documents</translation>
    </message>
    <message>
        <source>The data cannot be previewed: %1</source>
        <translation>Les données ne peuvent pas être prévisualisées : %1</translation>
    </message>
    <message numerus="yes">
        <source>%n conversation(s)</source>
        <translation>
            <numerusform>%n conversation</numerusform>
            <numerusform>%n conversations</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n document(s)</source>
        <translation>
            <numerusform>%n document</numerusform>
            <numerusform>%n documents</numerusform>
        </translation>
    </message>
    <message>
        <source>, %1 tokens</source>
        <translation>, %1 jetons</translation>
    </message>
    <message>
        <source>%1 longer than the context of %2 tokens (each is split across windows)</source>
        <translation>%1 plus longs que le contexte de %2 jetons (chacun est réparti sur plusieurs fenêtres)</translation>
    </message>
    <message>
        <source>%1 cut by a window&apos;s edge</source>
        <translation>%1 coupés par le bord d&apos;une fenêtre</translation>
    </message>
    <message>
        <source>%1 windows of %2 tokens, %3 of them left out for holding nothing to learn</source>
        <translation>%1 fenêtres de %2 jetons, dont %3 laissées de côté car elles n&apos;ont rien à apprendre</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s) cannot be read (listed below); a run stops at the first</source>
        <translation>
            <numerusform>%n ligne est illisible (listée ci-dessous) ; un entraînement s’arrête à la première</numerusform>
            <numerusform>%n lignes sont illisibles (listées ci-dessous) ; un entraînement s’arrête à la première</numerusform>
        </translation>
    </message>
    <message>
        <source>Line %1: %2 tokens, %3 trained</source>
        <translation>Ligne %1 : %2 jetons, %3 entraînés</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>Jetons</translation>
    </message>
    <message>
        <source>The context</source>
        <translation>Le contexte</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Fermer</translation>
    </message>
</context>
<context>
    <name>tandem::ui::HistoryModel</name>
    <message>
        <source>Started</source>
        <translation>Démarré</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modèle</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>Jeu de données</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>État</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>Terminé</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>Arrêté</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>Échoué</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>En cours</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>Interrompu</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>Résultat</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>Vitesse</translation>
    </message>
    <message>
        <source>%1&apos;s model</source>
        <translation>modèle de %1</translation>
    </message>
    <message>
        <source>Lending to %1</source>
        <translation>Prêté à %1 (en cours)</translation>
    </message>
    <message>
        <source>Lent to %1</source>
        <translation>Prêté à %1</translation>
    </message>
    <message numerus="yes">
        <source>this machine: %n sample(s)</source>
        <translation>
            <numerusform>cette machine : %n exemple</numerusform>
            <numerusform>cette machine : %n exemples</numerusform>
        </translation>
    </message>
    <message>
        <source>%1, loss %2</source>
        <translation>%1, perte %2</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Nom</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Paramètres</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>Durée</translation>
    </message>
    <message>
        <source>lr %1</source>
        <translation>taux %1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>%n époque</numerusform>
            <numerusform>%n époques</numerusform>
        </translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation>lot %1</translation>
    </message>
    <message>
        <source>LoRA %1</source>
        <translation>LoRA %1</translation>
    </message>
    <message numerus="yes">
        <source>%n machine(s)</source>
        <translation>
            <numerusform>%n machine</numerusform>
            <numerusform>%n machines</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::HubDialog</name>
    <message>
        <source>Get a model</source>
        <translation>Obtenir un modèle</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub: llama, qwen, smollm…</source>
        <translation>Chercher sur le Hub Hugging Face : llama, qwen, smollm…</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>Chercher</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modèle</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>Téléchargements</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>Tâche</translation>
    </message>
    <message>
        <source>Access</source>
        <translation>Accès</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>Télécharger</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Arrêter</translation>
    </message>
    <message>
        <source>On the Hugging Face Hub</source>
        <translation>Sur le Hub Hugging Face</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Taille</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>Dossier</translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation>Utiliser ce modèle</translation>
    </message>
    <message>
        <source>On this computer (%1)</source>
        <translation>Sur cet ordinateur (%1)</translation>
    </message>
    <message>
        <source>hf_… from huggingface.co/settings/tokens</source>
        <translation>hf_… depuis huggingface.co/settings/tokens</translation>
    </message>
    <message>
        <source>Save token</source>
        <translation>Enregistrer le jeton</translation>
    </message>
    <message>
        <source>Access token</source>
        <translation>Jeton d&apos;accès</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Fermer</translation>
    </message>
    <message>
        <source>%1 of %2: %3</source>
        <translation>%1 sur %2 : %3</translation>
    </message>
    <message numerus="yes">
        <source>Downloaded: %n file(s), %1 (%2 were here already). Choose it below and press Use this model.</source>
        <translation>
            <numerusform>Téléchargé : %n fichier, %1 (%2 étaient déjà là). Choisissez-le ci-dessous et appuyez sur Utiliser ce modèle.</numerusform>
            <numerusform>Téléchargé : %n fichiers, %1 (%2 étaient déjà là). Choisissez-le ci-dessous et appuyez sur Utiliser ce modèle.</numerusform>
        </translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>Recherche…</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>Libre</translation>
    </message>
    <message>
        <source>Gated: needs a token</source>
        <translation>Restreint : demande un jeton</translation>
    </message>
    <message>
        <source>No model on the Hub matches.</source>
        <translation>Aucun modèle du Hub ne correspond.</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s). Choose one and press Download.</source>
        <translation>
            <numerusform>%n modèle. Choisissez-en un et appuyez sur Télécharger.</numerusform>
            <numerusform>%n modèles. Choisissez-en un et appuyez sur Télécharger.</numerusform>
        </translation>
    </message>
    <message>
        <source>Asking the Hub for %1&apos;s files…</source>
        <translation>Demande au Hub des fichiers de %1…</translation>
    </message>
    <message>
        <source>%1 (incomplete)</source>
        <translation>%1 (incomplet)</translation>
    </message>
    <message>
        <source>No token: open models download without one; gated ones (Llama, Gemma) need one that has accepted their terms.</source>
        <translation>Aucun jeton : les modèles libres se téléchargent sans ; les modèles restreints (Llama, Gemma) en demandent un dont le compte a accepté leurs conditions.</translation>
    </message>
    <message>
        <source>A token is kept in the system&apos;s keychain.</source>
        <translation>Un jeton est conservé dans le trousseau du système.</translation>
    </message>
    <message>
        <source>The token in HF_TOKEN is used.</source>
        <translation>Le jeton de HF_TOKEN est utilisé.</translation>
    </message>
    <message>
        <source>A token is kept in %1 (readable by you only).</source>
        <translation>Un jeton est conservé dans %1 (lisible par vous seul).</translation>
    </message>
</context>
<context>
    <name>tandem::ui::MainWindow</name>
    <message>
        <source>Export for Ollama / llama.cpp…</source>
        <translation>Exporter pour Ollama / llama.cpp…</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>inconnue</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, the usual choice</source>
        <translation>Q4_K_M : environ %1, le choix habituel</translation>
    </message>
    <message>
        <source>Q8_0: about %1, nearly as trained</source>
        <translation>Q8_0 : environ %1, presque comme entraîné</translation>
    </message>
    <message>
        <source>F16: about %1, as trained</source>
        <translation>F16 : environ %1, comme entraîné</translation>
    </message>
    <message>
        <source>BF16: about %1, as trained</source>
        <translation>BF16 : environ %1, comme entraîné</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>Exporter pour Ollama / llama.cpp</translation>
    </message>
    <message>
        <source>How the weights are stored:</source>
        <translation>Comment les poids sont stockés :</translation>
    </message>
    <message>
        <source>Export as GGUF</source>
        <translation>Exporter en GGUF</translation>
    </message>
    <message>
        <source>GGUF (*.gguf)</source>
        <translation>GGUF (*.gguf)</translation>
    </message>
    <message>
        <source>Export Hugging Face folder…</source>
        <translation>Exporter le dossier Hugging Face…</translation>
    </message>
    <message>
        <source>Export adapters (PEFT)…</source>
        <translation>Exporter les adaptateurs (PEFT)…</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Masquer</translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation>Grappe</translation>
    </message>
    <message>
        <source>Load…</source>
        <translation>Ouvrir…</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>Enregistrer…</translation>
    </message>
    <message>
        <source>Load a run description (JSON, as for tandem train --config)</source>
        <translation>Ouvrir une description d&apos;entraînement (JSON, comme pour tandem train --config)</translation>
    </message>
    <message>
        <source>Save this run description as JSON</source>
        <translation>Enregistrer cette description d&apos;entraînement en JSON</translation>
    </message>
    <message>
        <source>New run</source>
        <translation>Nouvel entraînement</translation>
    </message>
    <message>
        <source>History</source>
        <translation>Historique</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>Démarrer</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>Pause</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Reprendre</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Arrêter</translation>
    </message>
    <message>
        <source>Ready. The demo is set up in New run: press Start.</source>
        <translation>Prêt. La démo est préparée dans Nouvel entraînement : cliquez sur Démarrer.</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>Journal</translation>
    </message>
    <message>
        <source>Paused at step %1. Resume continues where it stopped.</source>
        <translation>En pause à l&apos;étape %1. Reprendre continue à partir de là.</translation>
    </message>
    <message>
        <source>Stopping: saving a checkpoint…</source>
        <translation>Arrêt : enregistrement d&apos;un point de reprise…</translation>
    </message>
    <message>
        <source>Training %1 on %2: %3 training samples, %4 steps per epoch</source>
        <translation>Entraînement de %1 sur %2 : %3 échantillons d&apos;entraînement, %4 étapes par époque</translation>
    </message>
    <message>
        <source>A machine left the run: %1. Its share goes to the others. Check that it is switched on and on this network; it can join again.</source>
        <translation>Une machine a quitté l&apos;entraînement : %1. Sa part revient aux autres. Vérifiez qu&apos;elle est allumée et sur ce réseau ; elle peut revenir.</translation>
    </message>
    <message>
        <source>This machine cannot join the network: %1. Another program may use the same ports; change them in Settings.</source>
        <translation>Cette machine ne peut pas rejoindre le réseau : %1. Un autre programme utilise peut-être les mêmes ports ; changez-les dans les Paramètres.</translation>
    </message>
    <message>
        <source>Paired: %1</source>
        <translation>Appairée : %1</translation>
    </message>
    <message>
        <source>This machine is training for %1.</source>
        <translation>Cette machine s&apos;entraîne pour %1.</translation>
    </message>
    <message>
        <source>This machine finished its work for %1.</source>
        <translation>Cette machine a terminé son travail pour %1.</translation>
    </message>
    <message>
        <source>Show Tandem</source>
        <translation>Afficher Tandem</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Quitter</translation>
    </message>
    <message>
        <source>Pair a machine…</source>
        <translation>Appairer une machine…</translation>
    </message>
    <message>
        <source>Unpair</source>
        <translation>Désappairer</translation>
    </message>
    <message>
        <source>Unpair %1? It can no longer train with this machine until you pair the two again.</source>
        <translation>Désappairer %1 ? Elle ne pourra plus s&apos;entraîner avec cette machine tant que vous ne les aurez pas appairées à nouveau.</translation>
    </message>
    <message>
        <source>Export TorchScript…</source>
        <translation>Exporter en TorchScript…</translation>
    </message>
    <message>
        <source>Export safetensors…</source>
        <translation>Exporter en safetensors…</translation>
    </message>
    <message>
        <source>Resume run</source>
        <translation>Reprendre l&apos;entraînement</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>Ouvrir le dossier</translation>
    </message>
    <message>
        <source>&amp;Tandem</source>
        <translation>&amp;Tandem</translation>
    </message>
    <message>
        <source>&amp;Load run description…</source>
        <translation>&amp;Ouvrir une description d&apos;entraînement…</translation>
    </message>
    <message>
        <source>&amp;Save run description…</source>
        <translation>&amp;Enregistrer la description d&apos;entraînement…</translation>
    </message>
    <message>
        <source>S&amp;ettings…</source>
        <translation>&amp;Paramètres…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Quitter</translation>
    </message>
    <message>
        <source>&amp;Machines</source>
        <translation>&amp;Machines</translation>
    </message>
    <message>
        <source>Set up &amp;pairing…</source>
        <translation>Configurer l&apos;&amp;appairage…</translation>
    </message>
    <message>
        <source>&amp;Add a machine by address…</source>
        <translation>A&amp;jouter une machine par adresse…</translation>
    </message>
    <message>
        <source>Add a machine</source>
        <translation>Ajouter une machine</translation>
    </message>
    <message>
        <source>IP address or host name of the machine:</source>
        <translation>Adresse IP ou nom d&apos;hôte de la machine :</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Aide</translation>
    </message>
    <message>
        <source>User &amp;guide</source>
        <translation>&amp;Guide de l&apos;utilisateur</translation>
    </message>
    <message>
        <source>&amp;About Tandem</source>
        <translation>À &amp;propos de Tandem</translation>
    </message>
    <message>
        <source>About Tandem</source>
        <translation>À propos de Tandem</translation>
    </message>
    <message>
        <source>Tandem %1
Trains one PyTorch model across your own machines.
Protocol version %2.</source>
        <translation>Tandem %1
Entraîne un modèle PyTorch sur vos propres machines.
Version du protocole %2.</translation>
    </message>
    <message>
        <source>A device ran out of memory (%1). Lower the batch size or leave that machine out, then start again.</source>
        <translation>Un appareil n&apos;a plus de mémoire (%1). Réduisez la taille du lot ou retirez cette machine, puis recommencez.</translation>
    </message>
    <message>
        <source>The dataset cannot be used: %1. Check the folder or file and its format (the user guide lists the formats).</source>
        <translation>Le jeu de données est inutilisable : %1. Vérifiez le dossier ou le fichier et son format (le guide de l&apos;utilisateur liste les formats).</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. Save it with torch.jit.save after torch.jit.script, and check that it returns class scores.</source>
        <translation>Le modèle est inutilisable : %1. Enregistrez-le avec torch.jit.save après torch.jit.script, et vérifiez qu&apos;il renvoie des scores de classe.</translation>
    </message>
    <message>
        <source>A machine could not join: %1.</source>
        <translation>Une machine n&apos;a pas pu rejoindre : %1.</translation>
    </message>
    <message>
        <source>The run stopped with an error: %1</source>
        <translation>L&apos;entraînement s&apos;est arrêté sur une erreur : %1</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>Vérification du modèle et du jeu de données…</translation>
    </message>
    <message>
        <source>No machine is chosen to train. Tick at least one machine under New run → Machines.</source>
        <translation>Aucune machine n&apos;est choisie pour l&apos;entraînement. Cochez-en au moins une dans Nouvel entraînement → Machines.</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>Démarrage…</translation>
    </message>
    <message numerus="yes">
        <source>Starting; inviting %n machine(s)…</source>
        <translation>
            <numerusform>Démarrage ; invitation de %n machine…</numerusform>
            <numerusform>Démarrage ; invitation de %n machines…</numerusform>
        </translation>
    </message>
    <message>
        <source>Run folder: %1</source>
        <translation>Dossier de l&apos;entraînement : %1</translation>
    </message>
    <message>
        <source>That run finished or has no checkpoint; start a new run instead.</source>
        <translation>Cet entraînement est terminé ou n&apos;a pas de point de reprise ; lancez plutôt un nouvel entraînement.</translation>
    </message>
    <message>
        <source>Cannot resume: %1</source>
        <translation>Impossible de reprendre : %1</translation>
    </message>
    <message>
        <source>Stopped at step %1; a checkpoint is saved.</source>
        <translation>Arrêté à l&apos;étape %1 ; un point de reprise est enregistré.</translation>
    </message>
    <message>
        <source>The run stopped at step %1. Resume it from History.</source>
        <translation>L&apos;entraînement s&apos;est arrêté à l&apos;étape %1. Reprenez-le depuis l&apos;Historique.</translation>
    </message>
    <message>
        <source>The run failed.</source>
        <translation>L&apos;entraînement a échoué.</translation>
    </message>
    <message>
        <source>Choose a run in History first.</source>
        <translation>Choisissez d&apos;abord un entraînement dans l&apos;Historique.</translation>
    </message>
    <message>
        <source>Export as TorchScript</source>
        <translation>Exporter en TorchScript</translation>
    </message>
    <message>
        <source>Export as safetensors</source>
        <translation>Exporter en safetensors</translation>
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
        <translation>Cet entraînement n&apos;a pas de point de reprise à exporter.</translation>
    </message>
    <message>
        <source>Exported to %1. In Python: %2</source>
        <translation>Exporté vers %1. En Python : %2</translation>
    </message>
    <message>
        <source>The export failed: %1</source>
        <translation>L&apos;export a échoué : %1</translation>
    </message>
    <message>
        <source>Pair with %1?</source>
        <translation>Appairer avec %1 ?</translation>
    </message>
    <message>
        <source>%1 (%2) wants to pair with this machine.

Does it show this code?

%3 %4</source>
        <translation>%1 (%2) veut s&apos;appairer avec cette machine.

Affiche-t-elle ce code ?

%3 %4</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>Les codes sont identiques</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>Les codes diffèrent</translation>
    </message>
    <message>
        <source>Save run description</source>
        <translation>Enregistrer la description d&apos;entraînement</translation>
    </message>
    <message>
        <source>Run description (*.json)</source>
        <translation>Description d&apos;entraînement (*.json)</translation>
    </message>
    <message>
        <source>Saved the run description to %1; train it with: tandem train --config %1</source>
        <translation>Description enregistrée dans %1 ; pour l&apos;entraîner : tandem train --config %1</translation>
    </message>
    <message>
        <source>Load run description</source>
        <translation>Ouvrir une description d&apos;entraînement</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>Entraînement</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>En pause</translation>
    </message>
    <message>
        <source>Stopping</source>
        <translation>Arrêt en cours</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>Inactive</translation>
    </message>
    <message>
        <source>Quit Tandem</source>
        <translation>Quitter Tandem</translation>
    </message>
    <message>
        <source>A run is in progress. Stop it (a checkpoint is saved, so it can be resumed) and quit?</source>
        <translation>Un entraînement est en cours. L&apos;arrêter (un point de reprise est enregistré pour le reprendre) et quitter ?</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>Ajouter</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Annuler</translation>
    </message>
    <message>
        <source>Stop and quit</source>
        <translation>Arrêter et quitter</translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation>Balayage</translation>
    </message>
    <message>
        <source>TorchScript (*.pt);;safetensors (*.safetensors)</source>
        <translation>TorchScript (*.pt);;safetensors (*.safetensors)</translation>
    </message>
    <message>
        <source>Try it…</source>
        <translation>Essayer…</translation>
    </message>
    <message>
        <source>Let a language model continue a prompt of yours.</source>
        <translation>Un modèle de langue poursuit un texte de votre choix.</translation>
    </message>
    <message>
        <source>Epoch %1: %2, test loss %3</source>
        <translation>Époque %1 : %2, perte de test %3</translation>
    </message>
    <message>
        <source>The run finished: %1. Export the model from History.</source>
        <translation>L&apos;entraînement est terminé : %1. Exportez le modèle depuis l&apos;historique.</translation>
    </message>
    <message>
        <source>Pausing after the step in progress…</source>
        <translation>Mise en pause après l&apos;étape en cours…</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 done · evaluating on %3 test samples… %4 %</source>
        <translation>Époque %1 sur %2 terminée · évaluation sur %3 échantillons de test… %4 %</translation>
    </message>
    <message>
        <source>device %1</source>
        <translation>appareil %1</translation>
    </message>
    <message>
        <source>Device ID: %1
Address: %2</source>
        <translation>ID d&apos;appareil : %1
Adresse : %2</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>Exporter</translation>
    </message>
    <message>
        <source>Stop lending</source>
        <translation>Arrêter le prêt</translation>
    </message>
    <message>
        <source>End this machine&apos;s part in the other machine&apos;s run; the run goes on without it.</source>
        <translation>Met fin à la part de cette machine dans l&apos;entraînement de l&apos;autre machine ; l&apos;entraînement continue sans elle.</translation>
    </message>
    <message>
        <source>This machine is %1 (device %2), listening on port %3</source>
        <translation>Cette machine est %1 (appareil %2), à l&apos;écoute sur le port %3</translation>
    </message>
    <message>
        <source>Training for %1</source>
        <translation>Entraîne pour %1</translation>
    </message>
    <message>
        <source>This machine finished its work for %1. The charts show its part of that run.</source>
        <translation>Cette machine a terminé son travail pour %1. Les graphiques montrent sa part de cet entraînement.</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1</source>
        <translation>Cette machine est prêtée à l&apos;entraînement de %1</translation>
    </message>
    <message>
        <source>Lending this machine to the run of %1 (device %2)</source>
        <translation>Cette machine est prêtée à l&apos;entraînement de %1 (appareil %2)</translation>
    </message>
    <message>
        <source>%1: receiving the model and the data…</source>
        <translation>%1 : réception du modèle et des données…</translation>
    </message>
    <message>
        <source>%1: %2 paused the run; this machine waits.</source>
        <translation>%1 : %2 a mis l&apos;entraînement en pause ; cette machine attend.</translation>
    </message>
    <message>
        <source>%1 on %2: waiting for the first step…</source>
        <translation>%1 sur %2 : en attente de la première étape…</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>étape %1</translation>
    </message>
    <message>
        <source>this machine&apos;s share %1 %</source>
        <translation>part de cette machine %1 %</translation>
    </message>
    <message>
        <source>loss %1</source>
        <translation>perte %1</translation>
    </message>
    <message>
        <source>%1 on %2</source>
        <translation>%1 sur %2</translation>
    </message>
    <message>
        <source>This machine is lending its device to another run: press Stop lending first.</source>
        <translation>Cette machine prête son appareil à un autre entraînement : appuyez d&apos;abord sur Arrêter le prêt.</translation>
    </message>
    <message>
        <source>Mode: %1</source>
        <translation>Mode : %1</translation>
    </message>
    <message>
        <source>The model cannot be used: %1.</source>
        <translation>Le modèle ne peut pas être utilisé : %1.</translation>
    </message>
    <message>
        <source>Export the Hugging Face folder as</source>
        <translation>Exporter le dossier Hugging Face sous</translation>
    </message>
    <message>
        <source>Export the adapters as</source>
        <translation>Exporter les adaptateurs sous</translation>
    </message>
    <message>
        <source>Resuming…</source>
        <translation>Reprise…</translation>
    </message>
    <message>
        <source>Ready: press Start to train with these settings.</source>
        <translation>Prêt : Démarrer lance l’entraînement avec ces réglages.</translation>
    </message>
    <message>
        <source>Epoch %1 of %2 · step %3 of %4 · elapsed %5 · about %6 left · %7 · loss %8</source>
        <translation>Époque %1 sur %2 · étape %3 sur %4 · écoulé %5 · environ %6 restant · %7 · perte %8</translation>
    </message>
    <message>
        <source>Finished: %1, %2.</source>
        <translation>Terminé : %1, %2.</translation>
    </message>
    <message>
        <source>This machine lent its device to that run; its model is on the machine that ran it.</source>
        <translation>Cette machine a prêté son appareil à ce run ; son modèle est sur la machine qui l’a lancé.</translation>
    </message>
    <message>
        <source>New run like this</source>
        <translation>Nouvel entraînement comme celui-ci</translation>
    </message>
    <message>
        <source>Puts this run&apos;s settings in the New run form.</source>
        <translation>Reprend les réglages de cet entraînement dans le formulaire Nouvel entraînement.</translation>
    </message>
    <message>
        <source>Folder: %1</source>
        <translation>Dossier : %1</translation>
    </message>
    <message>
        <source>No file manager opened the folder. The run&apos;s files are in %1</source>
        <translation>Aucun gestionnaire de fichiers n&apos;a ouvert le dossier. Les fichiers de l&apos;entraînement sont dans %1</translation>
    </message>
    <message>
        <source>Not started.</source>
        <translation>Non démarré.</translation>
    </message>
    <message>
        <source>The model cannot be used: %1. The user guide lists the model families Tandem reads.</source>
        <translation>Le modèle ne peut pas être utilisé : %1. Le guide de l&apos;utilisateur liste les familles de modèles que Tandem lit.</translation>
    </message>
    <message>
        <source>Q4_K_M: about %1, hardly smaller here: this model&apos;s rows are not whole blocks of 256 values, which 4 bits need, so they are stored at 5 to 8 bits</source>
        <translation>Q4_K_M : environ %1, à peine plus petit ici : les lignes de ce modèle ne forment pas des blocs entiers de 256 valeurs, nécessaires aux 4 bits, elles sont donc stockées sur 5 à 8 bits</translation>
    </message>
    <message>
        <source>That run&apos;s record has no settings to start from: %1</source>
        <translation>L&apos;enregistrement de cet entraînement n&apos;a pas de réglages à reprendre : %1</translation>
    </message>
    <message>
        <source>This machine finished its work for %1 before its first step.</source>
        <translation>Cette machine a terminé son travail pour %1 avant sa première étape.</translation>
    </message>
    <message>
        <source>%1 stopped lending itself to this run. Its share goes to the others.</source>
        <translation>%1 ne se prête plus à cet entraînement. Sa part revient aux autres.</translation>
    </message>
    <message>
        <source>Notes…</source>
        <translation>Notes…</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>Comparer</translation>
    </message>
    <message>
        <source>Choose two or more runs (Ctrl+click) to see their curves and settings side by side.</source>
        <translation>Choisissez au moins deux entraînements (Ctrl+clic) pour voir leurs courbes et réglages côte à côte.</translation>
    </message>
    <message>
        <source>Notes on %1</source>
        <translation>Notes sur %1</translation>
    </message>
    <message>
        <source>What to remember of this run (shown in History and when comparing runs):</source>
        <translation>Ce qu&apos;il faut retenir de cet entraînement (affiché dans l&apos;Historique et lors des comparaisons) :</translation>
    </message>
    <message>
        <source>%1 unpaired this machine. To train together again, pair the two (Machines → Set up pairing).</source>
        <translation>%1 a désappairé cette machine. Pour entraîner de nouveau ensemble, appairez les deux (Machines → Configurer l&apos;appairage).</translation>
    </message>
    <message>
        <source>Exported to %1.</source>
        <translation>Exporté vers %1.</translation>
    </message>
    <message>
        <source>Ollama is not installed on this machine; where it is: %1. LM Studio and llama.cpp open the file as it is.</source>
        <translation>Ollama n&apos;est pas installé sur cette machine ; là où il l&apos;est : %1. LM Studio et llama.cpp ouvrent le fichier tel quel.</translation>
    </message>
    <message>
        <source>Added to Ollama as %1: ollama run %1</source>
        <translation>Ajouté à Ollama sous le nom %1 : ollama run %1</translation>
    </message>
    <message>
        <source>Ollama could not add it (%1). By hand: %2</source>
        <translation>Ollama n&apos;a pas pu l&apos;ajouter (%1). À la main : %2</translation>
    </message>
    <message>
        <source>Adding it to Ollama as %1…</source>
        <translation>Ajout à Ollama sous le nom %1…</translation>
    </message>
</context>
<context>
    <name>tandem::ui::PeerModel</name>
    <message>
        <source>Machine</source>
        <translation>Machine</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>État</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>Appareils</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>Rôle</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>Échantillons/s</translation>
    </message>
    <message>
        <source>Device ID %1
%2
Tandem %3</source>
        <translation>ID d&apos;appareil %1
%2
Tandem %3</translation>
    </message>
    <message>
        <source>%1 (this machine)</source>
        <translation>%1 (cette machine)</translation>
    </message>
    <message>
        <source>Online</source>
        <translation>En ligne</translation>
    </message>
    <message>
        <source>Offline</source>
        <translation>Hors ligne</translation>
    </message>
    <message>
        <source>Online, paired</source>
        <translation>En ligne, appairée</translation>
    </message>
    <message>
        <source>Online, not paired</source>
        <translation>En ligne, non appairée</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>Inactive</translation>
    </message>
    <message>
        <source>Coordinator</source>
        <translation>Coordinateur</translation>
    </message>
    <message>
        <source>Coordinator and worker</source>
        <translation>Coordinateur et worker</translation>
    </message>
    <message>
        <source>Idle: would slow the run (%1 ms a step before its first sample, against a %2 ms step)</source>
        <translation>Inactive : ralentirait l&apos;entraînement (%1 ms par étape avant son premier échantillon, contre une étape de %2 ms)</translation>
    </message>
    <message>
        <source>Idle: slowed the run (its steps took %1 ms, against %2 ms without it)</source>
        <translation>Inactive : ralentissait l&apos;entraînement (ses étapes prenaient %1 ms, contre %2 ms sans elle)</translation>
    </message>
    <message>
        <source>The run measures it again after a few dozen steps, then less often while it would still slow the run, and gives it a share again when it would make steps shorter: when its load lifts, its link gets faster, or the batch grows.</source>
        <translation>L&apos;entraînement la mesure de nouveau après quelques dizaines d&apos;étapes, puis moins souvent tant qu&apos;elle ralentirait encore l&apos;entraînement, et lui redonne une part dès qu&apos;elle raccourcirait les étapes : quand sa charge baisse, que sa liaison devient plus rapide ou que le lot grandit.</translation>
    </message>
    <message>
        <source>Worker</source>
        <translation>Worker</translation>
    </message>
    <message>
        <source>Online, but its Tandem %1 cannot work with this one: install the same version on both</source>
        <translation>En ligne, mais son Tandem %1 ne peut pas fonctionner avec celui-ci : installez la même version sur les deux</translation>
    </message>
    <message>
        <source>Device ID</source>
        <translation>ID d&apos;appareil</translation>
    </message>
    <message>
        <source>This machine&apos;s part of each step&apos;s samples, as the run assigns them: the machine that lends its device shows the same figure</source>
        <translation>La part de cette machine dans les exemples de chaque étape, telle que le run les attribue : la machine qui prête son appareil affiche le même chiffre</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>Part</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>Jetons/s</translation>
    </message>
    <message>
        <source>In a sharded run: which range of the trainable values this machine owns, what it keeps for it (the fp32 weights, the optimizer&apos;s state and the gradients&apos; sum), and the bytes its links sent and received in the last step</source>
        <translation>Dans un entraînement réparti (--shard) : la plage des valeurs entraînables que possède cette machine, ce qu&apos;elle garde pour elle (les poids fp32, l&apos;état de l&apos;optimiseur et la somme des gradients), et les octets que ses liens ont envoyés et reçus à la dernière étape</translation>
    </message>
    <message>
        <source>Shard</source>
        <translation>Fragment</translation>
    </message>
    <message>
        <source>%1 of %2, %3, %4 a step</source>
        <translation>%1 sur %2, %3, %4 par étape</translation>
    </message>
    <message>
        <source>%1 of %2, %3</source>
        <translation>%1 sur %2, %3</translation>
    </message>
</context>
<context>
    <name>tandem::ui::RunForm</name>
    <message>
        <source>Text file (bytes, or a Hugging Face model&apos;s tokenizer)</source>
        <translation>Fichier texte (octets, ou le tokenizer d&apos;un modèle Hugging Face)</translation>
    </message>
    <message>
        <source>JSON Lines of documents (&quot;text&quot; a line; a Hugging Face model)</source>
        <translation>JSON Lines de documents (&quot;text&quot; par ligne ; un modèle Hugging Face)</translation>
    </message>
    <message>
        <source>Chat conversations (JSON Lines of &quot;messages&quot;; a Hugging Face model)</source>
        <translation>Conversations (JSON Lines de &quot;messages&quot; ; un modèle Hugging Face)</translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl *.json);;All files (*)</source>
        <translation>JSON Lines (*.jsonl *.json);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>A Hugging Face folder… (%1)</source>
        <translation>Un dossier Hugging Face… (%1)</translation>
    </message>
    <message>
        <source>empty: train every weight</source>
        <translation>vide : entraîner tous les poids</translation>
    </message>
    <message>
        <source>Low-rank adapters: only they train, the model&apos;s own weights stay frozen. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</source>
        <translation>Adaptateurs de rang faible : eux seuls s’entraînent, les poids du modèle restent figés. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj</translation>
    </message>
    <message>
        <source>Recompute activations (less memory, more time)</source>
        <translation>Recalculer les activations (moins de mémoire, plus de temps)</translation>
    </message>
    <message>
        <source>Adapters (LoRA)</source>
        <translation>Adaptateurs (LoRA)</translation>
    </message>
    <message>
        <source>a folder with config.json and model.safetensors</source>
        <translation>un dossier contenant config.json et model.safetensors</translation>
    </message>
    <message>
        <source>Choose a Hugging Face model folder</source>
        <translation>Choisir un dossier de modèle Hugging Face</translation>
    </message>
    <message>
        <source>Choose the Hugging Face model&apos;s folder.</source>
        <translation>Choisissez le dossier du modèle Hugging Face.</translation>
    </message>
    <message>
        <source>mnist-cnn: convolutional network for 28×28 images</source>
        <translation>mnist-cnn : réseau convolutif pour images 28×28</translation>
    </message>
    <message>
        <source>mlp: small fully connected network</source>
        <translation>mlp : petit réseau entièrement connecté</translation>
    </message>
    <message>
        <source>resnet8: small ResNet for 32×32 colour images</source>
        <translation>resnet8 : petit ResNet pour images couleur 32×32</translation>
    </message>
    <message>
        <source>Your TorchScript file…</source>
        <translation>Votre fichier TorchScript…</translation>
    </message>
    <message>
        <source>model.pt saved with torch.jit.save</source>
        <translation>model.pt enregistré avec torch.jit.save</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>Choisir…</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modèle</translation>
    </message>
    <message>
        <source>Fashion-MNIST (built in)</source>
        <translation>Fashion-MNIST (intégré)</translation>
    </message>
    <message>
        <source>Fashion-MNIST folder (IDX files)</source>
        <translation>Dossier Fashion-MNIST (fichiers IDX)</translation>
    </message>
    <message>
        <source>MNIST folder (IDX files)</source>
        <translation>Dossier MNIST (fichiers IDX)</translation>
    </message>
    <message>
        <source>CIFAR-10 folder (binary version)</source>
        <translation>Dossier CIFAR-10 (version binaire)</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>Jeu de données</translation>
    </message>
    <message>
        <source>Machines</source>
        <translation>Machines</translation>
    </message>
    <message>
        <source>Synchronous: one model, exact (best on a fast network)</source>
        <translation>Synchrone : un seul modèle, exact (idéal sur un réseau rapide)</translation>
    </message>
    <message>
        <source>Asynchronous: no waiting for the slowest machine</source>
        <translation>Asynchrone : sans attendre la machine la plus lente</translation>
    </message>
    <message>
        <source>Local SGD: several local steps per exchange (slow networks)</source>
        <translation>SGD local : plusieurs étapes locales par échange (réseaux lents)</translation>
    </message>
    <message>
        <source>Automatic: measures the network, then synchronous or streaming</source>
        <translation>Automatique : mesure le réseau, puis synchrone ou en flux</translation>
    </message>
    <message>
        <source>Streaming local SGD: exchanges overlap training (Wi-Fi)</source>
        <translation>SGD local en flux : les échanges chevauchent l’entraînement (Wi-Fi)</translation>
    </message>
    <message>
        <source>8-bit blocks (a quarter of the traffic)</source>
        <translation>Blocs de 8 bits (un quart du trafic)</translation>
    </message>
    <message>
        <source>4-bit blocks (an eighth of the traffic)</source>
        <translation>Blocs de 4 bits (un huitième du trafic)</translation>
    </message>
    <message>
        <source>Local SGD updates</source>
        <translation>Mises à jour du SGD local</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>Mode</translation>
    </message>
    <message>
        <source>32-bit floats (exact)</source>
        <translation>Flottants 32 bits (exact)</translation>
    </message>
    <message>
        <source>16-bit floats (half the traffic)</source>
        <translation>Flottants 16 bits (moitié moins de trafic)</translation>
    </message>
    <message>
        <source>bfloat16 (half the traffic, wider range)</source>
        <translation>bfloat16 (moitié moins de trafic, plage plus large)</translation>
    </message>
    <message>
        <source>Wire precision</source>
        <translation>Précision sur le réseau</translation>
    </message>
    <message>
        <source>Device on this machine</source>
        <translation>Appareil de cette machine</translation>
    </message>
    <message>
        <source>Best available: %1</source>
        <translation>Le meilleur disponible : %1</translation>
    </message>
    <message>
        <source>Compute precision</source>
        <translation>Précision de calcul</translation>
    </message>
    <message>
        <source>bfloat16 autocast (faster on recent CPUs and GPUs)</source>
        <translation>autocast bfloat16 (plus rapide sur les CPU et GPU récents)</translation>
    </message>
    <message>
        <source>16-bit autocast (NVIDIA and Apple GPUs)</source>
        <translation>autocast 16 bits (GPU NVIDIA et Apple)</translation>
    </message>
    <message>
        <source>SGD with momentum</source>
        <translation>SGD avec momentum</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>Optimiseur</translation>
    </message>
    <message>
        <source>constant</source>
        <translation>constant</translation>
    </message>
    <message>
        <source>cosine decay</source>
        <translation>décroissance cosinus</translation>
    </message>
    <message>
        <source>warm-up steps: </source>
        <translation>étapes de préchauffage : </translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>Taux d&apos;apprentissage</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>Époques</translation>
    </message>
    <message>
        <source>Batch (all machines)</source>
        <translation>Lot (toutes machines)</translation>
    </message>
    <message>
        <source>a folder</source>
        <translation>un dossier</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>Impossible d&apos;écrire %1 : %2</translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation>Impossible de lire %1 : %2</translation>
    </message>
    <message>
        <source>%1 is not a run description: %2</source>
        <translation>%1 n&apos;est pas une description d&apos;entraînement : %2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1 : %2</translation>
    </message>
    <message>
        <source>Choose a TorchScript model</source>
        <translation>Choisir un modèle TorchScript</translation>
    </message>
    <message>
        <source>TorchScript (*.pt *.pth);;All files (*)</source>
        <translation>TorchScript (*.pt *.pth);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>Choose the dataset folder</source>
        <translation>Choisir le dossier du jeu de données</translation>
    </message>
    <message>
        <source>Checking the model and the dataset…</source>
        <translation>Vérification du modèle et du jeu de données…</translation>
    </message>
    <message>
        <source>Choose a TorchScript file for the model.</source>
        <translation>Choisissez un fichier TorchScript pour le modèle.</translation>
    </message>
    <message>
        <source>Choose where the dataset is.</source>
        <translation>Indiquez où se trouve le jeu de données.</translation>
    </message>
    <message>
        <source>Check model and data</source>
        <translation>Vérifier le modèle et les données</translation>
    </message>
    <message>
        <source>gpt: small language model over the bytes of a text</source>
        <translation>gpt : petit modèle de langue sur les octets d&apos;un texte</translation>
    </message>
    <message>
        <source>CSV file (label= or target= column and numbers)</source>
        <translation>Fichier CSV (colonne label= ou target= et nombres)</translation>
    </message>
    <message>
        <source>Token file (nanoGPT .bin)</source>
        <translation>Fichier de jetons (nanoGPT .bin)</translation>
    </message>
    <message>
        <source>NumPy arrays (.npz with x_train, y_train)</source>
        <translation>Tableaux NumPy (.npz avec x_train, y_train)</translation>
    </message>
    <message>
        <source>Image folder (one subfolder per class)</source>
        <translation>Dossier d&apos;images (un sous-dossier par classe)</translation>
    </message>
    <message>
        <source>Automatic: from the model&apos;s output and the data</source>
        <translation>Automatique : selon la sortie du modèle et les données</translation>
    </message>
    <message>
        <source>Cross-entropy (classes, next token)</source>
        <translation>Entropie croisée (classes, jeton suivant)</translation>
    </message>
    <message>
        <source>Mean squared error (regression)</source>
        <translation>Erreur quadratique moyenne (régression)</translation>
    </message>
    <message>
        <source>Mean absolute error (regression)</source>
        <translation>Erreur absolue moyenne (régression)</translation>
    </message>
    <message>
        <source>Huber (regression with outliers)</source>
        <translation>Huber (régression avec valeurs aberrantes)</translation>
    </message>
    <message>
        <source>Binary cross-entropy (several labels each)</source>
        <translation>Entropie croisée binaire (plusieurs étiquettes chacun)</translation>
    </message>
    <message>
        <source>The model&apos;s own loss() method</source>
        <translation>La méthode loss() du modèle</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>Perte</translation>
    </message>
    <message>
        <source>a .csv file[,target=COLUMN to predict a number]</source>
        <translation>un fichier .csv[,target=COLONNE pour prédire un nombre]</translation>
    </message>
    <message>
        <source>a text file[,context=256]</source>
        <translation>un fichier texte[,context=256]</translation>
    </message>
    <message>
        <source>a .bin file[,dtype=uint16][,context=256]</source>
        <translation>un fichier .bin[,dtype=uint16][,context=256]</translation>
    </message>
    <message>
        <source>a folder of class folders[,size=64]</source>
        <translation>un dossier de dossiers de classes[,size=64]</translation>
    </message>
    <message>
        <source>a file</source>
        <translation>un fichier</translation>
    </message>
    <message>
        <source>Choose the dataset file</source>
        <translation>Choisir le fichier de données</translation>
    </message>
    <message>
        <source>CSV (*.csv);;All files (*)</source>
        <translation>CSV (*.csv);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>Text (*.txt *.md);;All files (*)</source>
        <translation>Texte (*.txt *.md);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>Token files (*.bin);;All files (*)</source>
        <translation>Fichiers de jetons (*.bin);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>NumPy (*.npz);;All files (*)</source>
        <translation>NumPy (*.npz);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>all of them</source>
        <translation>tous</translation>
    </message>
    <message>
        <source>Train on the first N training samples only; 0 uses them all.</source>
        <translation>N&apos;entraîner que sur les N premiers échantillons d&apos;entraînement ; 0 les prend tous.</translation>
    </message>
    <message>
        <source>Training samples</source>
        <translation>Échantillons d&apos;entraînement</translation>
    </message>
    <message>
        <source>Base as stored</source>
        <translation>Base telle qu’enregistrée</translation>
    </message>
    <message>
        <source>Base in 8 bits</source>
        <translation>Base sur 8 bits</translation>
    </message>
    <message>
        <source>Base in 4 bits (QLoRA)</source>
        <translation>Base sur 4 bits (QLoRA)</translation>
    </message>
    <message>
        <source>The frozen model&apos;s own weights in 4 bits (nf4) take about a quarter of bf16&apos;s memory: a 7-8B model fits a 12 GB card</source>
        <translation>Les poids figés du modèle sur 4 bits (nf4) occupent environ un quart de la mémoire de bf16 : un modèle de 7 à 8 B tient sur une carte de 12 Go</translation>
    </message>
    <message>
        <source>No</source>
        <translation>Non</translation>
    </message>
    <message>
        <source>Q4_K_M: smallest, about 4.9 bits a weight</source>
        <translation>Q4_K_M : le plus petit, environ 4,9 bits par poids</translation>
    </message>
    <message>
        <source>Q8_0: 8.5 bits a weight, close to the original</source>
        <translation>Q8_0 : 8,5 bits par poids, proche de l’original</translation>
    </message>
    <message>
        <source>F16: 16 bits, as trained</source>
        <translation>F16 : 16 bits, tel qu’entraîné</translation>
    </message>
    <message>
        <source>BF16: 16 bits, as trained</source>
        <translation>BF16 : 16 bits, tel qu’entraîné</translation>
    </message>
    <message>
        <source>At the end of the run, also write model.gguf and model.Modelfile in the run&apos;s folder: `ollama create NAME -f model.Modelfile` adds it to Ollama, and LM Studio and llama.cpp open model.gguf as it is</source>
        <translation>À la fin de l’entraînement, écrire aussi model.gguf et model.Modelfile dans son dossier : `ollama create NOM -f model.Modelfile` l’ajoute à Ollama, et LM Studio et llama.cpp ouvrent model.gguf tel quel</translation>
    </message>
    <message>
        <source>Export for Ollama / llama.cpp</source>
        <translation>Exporter pour Ollama / llama.cpp</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> jetons</translation>
    </message>
    <message>
        <source>How many tokens the model sees at once: each training window holds this many, and predicts each next one.</source>
        <translation>Combien de jetons le modèle voit à la fois : chaque fenêtre d’entraînement en contient autant et prédit chacun le suivant.</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>Contexte</translation>
    </message>
    <message>
        <source>= %1 tokens a step</source>
        <translation>= %1 jetons par étape</translation>
    </message>
    <message>
        <source>Batch set to %1 for this data; set it yourself to keep another.</source>
        <translation>Lot fixé à %1 pour ces données ; réglez-le vous-même pour en garder un autre.</translation>
    </message>
    <message>
        <source>Preference pairs (JSON Lines of &quot;prompt&quot;, &quot;chosen&quot; and &quot;rejected&quot;; a Hugging Face model)</source>
        <translation>Paires de préférence (JSON Lines de &quot;prompt&quot;, &quot;chosen&quot; et &quot;rejected&quot; ; un modèle Hugging Face)</translation>
    </message>
    <message>
        <source>DPO (preference pairs; LoRA adapters, whose base is the reference)</source>
        <translation>DPO (paires de préférence ; adaptateurs LoRA, dont la base est la référence)</translation>
    </message>
    <message>
        <source>ORPO (preference pairs; no reference model)</source>
        <translation>ORPO (paires de préférence ; sans modèle de référence)</translation>
    </message>
    <message>
        <source>DPO&apos;s β: how far the model may move from the reference. ORPO&apos;s λ: the weight of the preference term beside the chosen answer&apos;s loss.</source>
        <translation>β de DPO : jusqu&apos;où le modèle peut s&apos;éloigner de la référence. λ d&apos;ORPO : le poids du terme de préférence à côté de la perte de la réponse choisie.</translation>
    </message>
    <message>
        <source>Preference strength (β, λ)</source>
        <translation>Force de la préférence (β, λ)</translation>
    </message>
    <message>
        <source>The layers that get adapters. Checked at first: those the model&apos;s family adapts by default.</source>
        <translation>Les couches qui reçoivent des adaptateurs. Cochées au départ : celles que la famille du modèle adapte par défaut.</translation>
    </message>
    <message>
        <source>Adapted layers</source>
        <translation>Couches adaptées</translation>
    </message>
    <message>
        <source>Preview…</source>
        <translation>Aperçu…</translation>
    </message>
    <message>
        <source>The first conversations as the model will read them, the tokens that train, the lengths against the context, and any line that cannot be read.</source>
        <translation>Les premières conversations telles que le modèle les lira, les jetons qui sont entraînés, les longueurs face au contexte, et toute ligne illisible.</translation>
    </message>
    <message>
        <source>From the Hub…</source>
        <translation>Depuis le Hub…</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub and download a model, or choose one already downloaded</source>
        <translation>Chercher sur le Hub Hugging Face et télécharger un modèle, ou en choisir un déjà téléchargé</translation>
    </message>
    <message>
        <source>optional: how History will name this run</source>
        <translation>facultatif : le nom de cet entraînement dans l&apos;Historique</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Nom</translation>
    </message>
    <message>
        <source>Split the weights and the optimizer across the machines</source>
        <translation>Répartir les poids et l&apos;optimiseur entre les machines</translation>
    </message>
    <message>
        <source>Each machine keeps one range of the fp32 weights, of the optimizer&apos;s state and of the gradients&apos; sum, and steps it itself: a full fine-tune can then need more memory than any one machine has. For synchronous and local SGD runs that train every weight, on more than one machine.</source>
        <translation>Chaque machine garde une plage des poids fp32, de l&apos;état de l&apos;optimiseur et de la somme des gradients, et en fait elle-même l&apos;étape : un réglage fin complet peut alors demander plus de mémoire qu&apos;aucune machine n&apos;en a. Pour les entraînements synchrones ou en SGD local de tous les poids, sur plus d&apos;une machine.</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SettingsDialog</name>
    <message>
        <source>Choose…</source>
        <translation>Choisir…</translation>
    </message>
    <message>
        <source>Choose a folder</source>
        <translation>Choisir un dossier</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Paramètres</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>Langue du système</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Langue</translation>
    </message>
    <message>
        <source>this computer&apos;s host name</source>
        <translation>le nom d&apos;hôte de cet ordinateur</translation>
    </message>
    <message>
        <source>Machine name</source>
        <translation>Nom de la machine</translation>
    </message>
    <message>
        <source>Discovery port (UDP)</source>
        <translation>Port de découverte (UDP)</translation>
    </message>
    <message>
        <source>Pairing port (TCP)</source>
        <translation>Port d&apos;appairage (TCP)</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>n&apos;importe quel port libre</translation>
    </message>
    <message>
        <source>Training port (TCP)</source>
        <translation>Port d&apos;entraînement (TCP)</translation>
    </message>
    <message>
        <source>Runs folder</source>
        <translation>Dossier des entraînements</translation>
    </message>
    <message>
        <source>Dataset cache</source>
        <translation>Cache des jeux de données</translation>
    </message>
    <message>
        <source>none: base models are received</source>
        <translation>aucun : les modèles de base sont reçus</translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation>Dossier de modèles</translation>
    </message>
    <message>
        <source>Train for paired machines while this one is idle</source>
        <translation>S&apos;entraîner pour les machines appairées quand celle-ci est inactive</translation>
    </message>
    <message>
        <source>A new language or new ports take effect when Tandem starts again.</source>
        <translation>Une nouvelle langue ou de nouveaux ports prennent effet au prochain démarrage de Tandem.</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>Enregistrer</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Annuler</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SetupWizard</name>
    <message>
        <source>This machine</source>
        <translation>Cette machine</translation>
    </message>
    <message>
        <source>Tandem trains on every device listed here. Other machines will see this machine under its name.</source>
        <translation>Tandem s&apos;entraîne sur chaque appareil listé ici. Les autres machines verront celle-ci sous son nom.</translation>
    </message>
    <message>
        <source>Devices:</source>
        <translation>Appareils :</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>Nom :</translation>
    </message>
    <message>
        <source>Device ID: %1</source>
        <translation>ID d&apos;appareil : %1</translation>
    </message>
    <message>
        <source>Find your other machine</source>
        <translation>Trouver votre autre machine</translation>
    </message>
    <message>
        <source>Start Tandem on the other machine too. Machines on this network appear below; choose one and press Next.</source>
        <translation>Lancez aussi Tandem sur l&apos;autre machine. Les machines de ce réseau apparaissent ci-dessous ; choisissez-en une et cliquez sur Suivant.</translation>
    </message>
    <message>
        <source>IP address or host name</source>
        <translation>Adresse IP ou nom d&apos;hôte</translation>
    </message>
    <message>
        <source>Add by address</source>
        <translation>Ajouter par adresse</translation>
    </message>
    <message>
        <source>Nothing yet? Check that Tandem runs on the other machine and that both are on the same network. Firewalls must allow UDP port 47300 and TCP port 47301. On a Mac, allow Tandem under System Settings → Privacy &amp; Security → Local Network. Some Wi-Fi networks block discovery: then add the other machine by its address.</source>
        <translation>Rien encore ? Vérifiez que Tandem tourne sur l&apos;autre machine et que les deux sont sur le même réseau. Les pare-feu doivent autoriser le port UDP 47300 et le port TCP 47301. Sur un Mac, autorisez Tandem dans Réglages Système → Confidentialité et sécurité → Réseau local. Certains réseaux Wi-Fi bloquent la découverte : ajoutez alors l&apos;autre machine par son adresse.</translation>
    </message>
    <message>
        <source>To train on this machine alone, press Next without choosing a machine.</source>
        <translation>Pour vous entraîner sur cette seule machine, cliquez sur Suivant sans choisir de machine.</translation>
    </message>
    <message>
        <source>Pair</source>
        <translation>Appairer</translation>
    </message>
    <message>
        <source>The codes match</source>
        <translation>Les codes sont identiques</translation>
    </message>
    <message>
        <source>The codes differ</source>
        <translation>Les codes diffèrent</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Réessayer</translation>
    </message>
    <message>
        <source>Check that %1 shows the same code:</source>
        <translation>Vérifiez que %1 affiche le même code :</translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>Connexion à %1…</translation>
    </message>
    <message>
        <source>Waiting for the other machine to confirm…</source>
        <translation>En attente de la confirmation de l&apos;autre machine…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>Annulation…</translation>
    </message>
    <message>
        <source>Paired with %1.</source>
        <translation>Appairée avec %1.</translation>
    </message>
    <message>
        <source>Press Next.</source>
        <translation>Cliquez sur Suivant.</translation>
    </message>
    <message>
        <source>Nobody answered in time.</source>
        <translation>Personne n&apos;a répondu à temps.</translation>
    </message>
    <message>
        <source>Press Try again, and confirm the code on both machines within a minute.</source>
        <translation>Cliquez sur Réessayer et confirmez le code sur les deux machines en moins d&apos;une minute.</translation>
    </message>
    <message>
        <source>You said the codes differ. Nothing was paired.</source>
        <translation>Vous avez indiqué que les codes diffèrent. Rien n&apos;a été appairé.</translation>
    </message>
    <message>
        <source>The other machine said the codes differ. Nothing was paired.</source>
        <translation>L&apos;autre machine a indiqué que les codes diffèrent. Rien n&apos;a été appairé.</translation>
    </message>
    <message>
        <source>Codes that differ can mean that another device is answering in place of your machine. Check that you chose the right machine, then try again.</source>
        <translation>Des codes différents peuvent signifier qu&apos;un autre appareil répond à la place de votre machine. Vérifiez que vous avez choisi la bonne machine, puis réessayez.</translation>
    </message>
    <message>
        <source>The other machine refused.</source>
        <translation>L&apos;autre machine a refusé.</translation>
    </message>
    <message>
        <source>It may be busy or have refused several attempts: wait a minute and try again.</source>
        <translation>Elle est peut-être occupée ou a refusé plusieurs tentatives : attendez une minute et réessayez.</translation>
    </message>
    <message>
        <source>Could not reach the other machine.</source>
        <translation>Impossible de joindre l&apos;autre machine.</translation>
    </message>
    <message>
        <source>Check that Tandem is running there and that its firewall allows TCP port 47301.</source>
        <translation>Vérifiez que Tandem y tourne et que son pare-feu autorise le port TCP 47301.</translation>
    </message>
    <message>
        <source>Pairing failed.</source>
        <translation>L&apos;appairage a échoué.</translation>
    </message>
    <message>
        <source>Try again. If this repeats, see Troubleshooting in the user guide.</source>
        <translation>Réessayez. Si cela se reproduit, consultez Dépannage dans le guide de l&apos;utilisateur.</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>Terminé</translation>
    </message>
    <message>
        <source>%1 and %2 are paired. They find each other on this network from now on; Tandem shares the training between them.</source>
        <translation>%1 et %2 sont appairées. Elles se retrouvent désormais sur ce réseau ; Tandem répartit l&apos;entraînement entre elles.</translation>
    </message>
    <message>
        <source>%1 is ready to train on its own. You can pair another machine at any time from Machines → Set up pairing.</source>
        <translation>%1 est prête à s&apos;entraîner seule. Vous pouvez appairer une autre machine à tout moment depuis Machines → Configurer l&apos;appairage.</translation>
    </message>
    <message>
        <source>Press Finish to open the dashboard. Its New run tab is set up for the demo (mnist-cnn on Fashion-MNIST): press Start.</source>
        <translation>Cliquez sur Terminer pour ouvrir le tableau de bord. Son onglet Nouvel entraînement est préparé pour la démo (mnist-cnn sur Fashion-MNIST) : cliquez sur Démarrer.</translation>
    </message>
    <message>
        <source>Set up Tandem</source>
        <translation>Configurer Tandem</translation>
    </message>
    <message>
        <source>Finish</source>
        <translation>Terminer</translation>
    </message>
    <message>
        <source>&lt; &amp;Back</source>
        <translation>&lt; &amp;Précédent</translation>
    </message>
    <message>
        <source>&amp;Next &gt;</source>
        <translation>&amp;Suivant &gt;</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Annuler</translation>
    </message>
    <message>
        <source>Both machines show a code. When the codes are the same, no other device sits between the two.</source>
        <translation>Les deux machines affichent un code. S&apos;ils sont identiques, aucun autre appareil ne s&apos;interpose entre elles.</translation>
    </message>
    <message>
        <source>What was set up, and what comes next.</source>
        <translation>Ce qui a été configuré, et la suite.</translation>
    </message>
    <message>
        <source>%1 and %2 are paired: %2 asked, and you confirmed the code here.</source>
        <translation>%1 et %2 sont appairées : %2 a demandé, et vous avez confirmé le code ici.</translation>
    </message>
    <message>
        <source>Runs started on %1 can now use this machine&apos;s devices. Keep Tandem open here: the dashboard shows the run while this machine takes part, with Stop lending to leave it. You can also start runs from here.</source>
        <translation>Les entraînements lancés sur %1 peuvent maintenant utiliser les appareils de cette machine. Laissez Tandem ouvert ici : le tableau de bord montre l&apos;entraînement tant que cette machine y participe, et Arrêter le prêt l&apos;en retire. Vous pouvez aussi lancer des entraînements d&apos;ici.</translation>
    </message>
</context>
<context>
    <name>tandem::ui::SweepTab</name>
    <message>
        <source>A sweep description (JSON): a run with a &quot;sweep&quot; object</source>
        <translation>Une description de balayage (JSON) : un entraînement avec un objet « sweep »</translation>
    </message>
    <message>
        <source>Open…</source>
        <translation>Ouvrir…</translation>
    </message>
    <message>
        <source>Where the trials&apos; run folders and sweep.jsonl go</source>
        <translation>Où vont les dossiers des essais et sweep.jsonl</translation>
    </message>
    <message>
        <source>Paired machines run trials too</source>
        <translation>Les machines appairées exécutent aussi des essais</translation>
    </message>
    <message>
        <source>Start sweep</source>
        <translation>Lancer le balayage</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>Continuer</translation>
    </message>
    <message>
        <source>Continue the sweep in this folder: finished trials are kept, interrupted ones resume from their checkpoints</source>
        <translation>Continuer le balayage de ce dossier : les essais terminés sont conservés, les essais interrompus reprennent depuis leur point de reprise</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Arrêter</translation>
    </message>
    <message>
        <source>Export best…</source>
        <translation>Exporter le meilleur…</translation>
    </message>
    <message>
        <source>Open a sweep file to start.</source>
        <translation>Ouvrez un fichier de balayage pour commencer.</translation>
    </message>
    <message>
        <source>Trial</source>
        <translation>Essai</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>Paramètres</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Appareil</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>État</translation>
    </message>
    <message>
        <source>Sweep file</source>
        <translation>Fichier de balayage</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>Dossier</translation>
    </message>
    <message>
        <source>Parameter</source>
        <translation>Paramètre</translation>
    </message>
    <message>
        <source>Open a sweep description</source>
        <translation>Ouvrir une description de balayage</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>This sweep file cannot be used: %1</source>
        <translation>Ce fichier de balayage est inutilisable : %1</translation>
    </message>
    <message numerus="yes">
        <source>%n trial(s), %1, searching %2. Results go to the folder above.</source>
        <translation>
            <numerusform>%n essai, %1, explore %2. Les résultats vont dans le dossier ci-dessus.</numerusform>
            <numerusform>%n essais, %1, explore %2. Les résultats vont dans le dossier ci-dessus.</numerusform>
        </translation>
    </message>
    <message>
        <source>That folder already holds a sweep: press Continue to go on with it, or choose another folder.</source>
        <translation>Ce dossier contient déjà un balayage : cliquez sur Continuer pour le poursuivre, ou choisissez un autre dossier.</translation>
    </message>
    <message>
        <source>Cannot continue: %1</source>
        <translation>Impossible de continuer : %1</translation>
    </message>
    <message numerus="yes">
        <source>%n epoch(s)</source>
        <translation>
            <numerusform>%n époque</numerusform>
            <numerusform>%n époques</numerusform>
        </translation>
    </message>
    <message>
        <source>test loss</source>
        <translation>perte de test</translation>
    </message>
    <message>
        <source>test accuracy</source>
        <translation>précision de test</translation>
    </message>
    <message>
        <source>Every trial</source>
        <translation>Tous les essais</translation>
    </message>
    <message>
        <source>step</source>
        <translation>étape</translation>
    </message>
    <message>
        <source>The sweep did not start: %1</source>
        <translation>Le balayage n&apos;a pas démarré : %1</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>en attente</translation>
    </message>
    <message>
        <source>running</source>
        <translation>en cours</translation>
    </message>
    <message>
        <source>waiting for promotion</source>
        <translation>en attente de promotion</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>terminé</translation>
    </message>
    <message>
        <source>stopped early</source>
        <translation>arrêté tôt</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>échec</translation>
    </message>
    <message>
        <source>trial %1</source>
        <translation>essai %1</translation>
    </message>
    <message>
        <source>%1 (log10)</source>
        <translation>%1 (log10)</translation>
    </message>
    <message>
        <source>%1 against %2</source>
        <translation>%1 selon %2</translation>
    </message>
    <message>
        <source>trials</source>
        <translation>essais</translation>
    </message>
    <message>
        <source>best</source>
        <translation>meilleur</translation>
    </message>
    <message numerus="yes">
        <source>Finished: %n trial(s) in %1 s.</source>
        <translation>
            <numerusform>Terminé : %n essai en %1 s.</numerusform>
            <numerusform>Terminé : %n essais en %1 s.</numerusform>
        </translation>
    </message>
    <message>
        <source>Stopped; Continue resumes it from the checkpoints.</source>
        <translation>Arrêté ; Continuer le reprend depuis les points de reprise.</translation>
    </message>
    <message>
        <source>Best: trial %1 (%2), %3.</source>
        <translation>Meilleur : essai %1 (%2), %3.</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n trial(s) started; running: %2; devices: %3.</source>
        <translation>
            <numerusform>%1 essai sur %n lancé ; en cours : %2 ; appareils : %3.</numerusform>
            <numerusform>%1 essais sur %n lancés ; en cours : %2 ; appareils : %3.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tandem::ui::TryDialog</name>
    <message>
        <source> tokens</source>
        <translation> jetons</translation>
    </message>
    <message>
        <source>Only the likeliest tokens that together make up this much probability are drawn from.</source>
        <translation>Le tirage se fait parmi les jetons les plus probables qui totalisent cette probabilité.</translation>
    </message>
    <message>
        <source>Tuned</source>
        <translation>Ajusté</translation>
    </message>
    <message>
        <source>Reference: the model before tuning</source>
        <translation>Référence : le modèle avant l’ajustement</translation>
    </message>
    <message>
        <source>Answer as in a chat</source>
        <translation>Répondre comme dans une conversation</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Arrêter</translation>
    </message>
    <message>
        <source>Try %1</source>
        <translation>Essayer %1</translation>
    </message>
    <message>
        <source> bytes</source>
        <translation> octets</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>Longueur</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Température</translation>
    </message>
    <message>
        <source>Could not generate: %1</source>
        <translation>Impossible de générer : %1</translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation>Génération…</translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), %1 tokens/s</source>
        <translation>
            <numerusform>%n jeton, %1 jetons/s</numerusform>
            <numerusform>%n jetons, %1 jetons/s</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not generate.</source>
        <translation>Impossible de générer.</translation>
    </message>
    <message>
        <source>Stopped: %1.</source>
        <translation>Arrêté : %1.</translation>
    </message>
    <message>
        <source>Done: %1.</source>
        <translation>Terminé : %1.</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Envoyer</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>Régénérer</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>Nouvelle conversation</translation>
    </message>
    <message>
        <source>A message for the model, or text to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>Un message pour le modèle, ou un texte à continuer. Entrée envoie ; Maj+Entrée commence une nouvelle ligne.</translation>
    </message>
    <message>
        <source>Text for the model to continue. Enter sends; Shift+Enter starts a new line.</source>
        <translation>Texte que le modèle doit continuer. Entrée envoie ; Maj+Entrée commence une nouvelle ligne.</translation>
    </message>
    <message>
        <source>Optional: how the model should answer</source>
        <translation>Facultatif : comment le modèle doit répondre</translation>
    </message>
    <message>
        <source>Writes your messages with the model&apos;s chat template and shows the assistant&apos;s answers; off, the model continues your text.</source>
        <translation>Écrit vos messages avec le modèle de conversation du modèle et affiche les réponses de l’assistant ; désactivé, le modèle continue votre texte.</translation>
    </message>
    <message>
        <source>0 always takes the likeliest next token; higher values vary more.</source>
        <translation>0 prend toujours le jeton suivant le plus probable ; des valeurs plus élevées varient davantage.</translation>
    </message>
    <message>
        <source>System</source>
        <translation>Système</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>Vous : %1</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Fermer</translation>
    </message>
</context>
</TS>
