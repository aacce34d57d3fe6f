#pragma once

// The Hugging Face Hub's cache on disk, as its own client (huggingface_hub) lays it out, so
// that a model downloaded by Tandem, by `huggingface-cli download` or by transformers is the
// same folder to all of them:
//
//   <cache>/models--ORG--NAME/blobs/<etag>                 each file's bytes, named by its hash
//   <cache>/models--ORG--NAME/refs/<revision>              the commit a branch or tag pointed at
//   <cache>/models--ORG--NAME/snapshots/<commit>/<file>    -> ../../blobs/<etag>
//
// <cache> is $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub (the XDG cache
// folder where one is set), as huggingface_hub chooses it.

#include <QList>
#include <QString>

namespace tandem::hub {

// $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
QString hfHome();
// The model cache folder (above).
QString cacheDir();

// "ORG/NAME" or "NAME": letters, digits, '-', '_' and '.', not starting with '.' and without
// "..". A name the Hub would not accept, and one that could leave the cache folder, is refused.
bool isRepoId(const QString& id);
// "models--ORG--NAME".
QString repoFolderName(const QString& repoId);

struct CachedModel {
    QString repoId;   // "ORG/NAME"
    QString revision; // the ref that names the snapshot ("main"), or empty when none does
    QString commit;   // the snapshot's folder name
    QString folder;   // the snapshot folder: what `hf:` takes
    qint64 bytes = 0; // of the files in it
    int files = 0;
    bool usable = false; // it has a config.json and at least one .safetensors file
};

// Every model snapshot under `cache`, by model name; a model's snapshots newest first, those a
// ref names ("main") before the others.
QList<CachedModel> cachedModels(const QString& cache);

// "<cache>/models--ORG--NAME/snapshots/<commit>".
QString snapshotFolder(const QString& cache, const QString& repoId, const QString& commit);

} // namespace tandem::hub
