// `tandem hub`: models from the Hugging Face Hub. Search it, download a model into the Hub's
// cache (which transformers and huggingface-cli share), list the models already there, and keep
// the access token gated models need.

#include "app/cli.h"
#include "app/nodecommands.h"
#include "common/clocktext.h"
#include "hub/hubcache.h"
#include "hub/hubclient.h"
#include "hub/hubtoken.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTextStream>

#include <cstdio>

namespace tandem::cli {

namespace {

QString gigabytes(qint64 bytes) {
    return bytes >= (1 << 30) ? QStringLiteral("%1 GB").arg(double(bytes) / 1e9, 0, 'f', 2)
                              : QStringLiteral("%1 MB").arg(double(bytes) / 1e6, 0, 'f', 1);
}

int search(hub::HubClient& c, const QString& text) {
    QEventLoop loop;
    int exit = kOk;
    QObject::connect(&c, &hub::HubClient::searched, &loop, [&](const QList<hub::HubModel>& models) {
        if (models.isEmpty())
            say(QStringLiteral("no models on the Hub match \"%1\"").arg(text));
        for (const hub::HubModel& m : models)
            printOut(QStringLiteral("%1  %2 downloads%3%4")
                         .arg(m.id.leftJustified(48), countText(m.downloads),
                              m.task.isEmpty() ? QString() : QStringLiteral(", ") + m.task,
                              m.gated.isEmpty() || m.gated == QLatin1String("no")
                                  ? QString()
                                  : QStringLiteral(", gated")));
        loop.quit();
    });
    QObject::connect(&c, &hub::HubClient::failed, &loop, [&](const QString& e) {
        printErr(e);
        exit = kFailed;
        loop.quit();
    });
    c.search(text);
    loop.exec();
    return exit;
}

int download(hub::HubClient& c, const QString& repo, const QString& revision) {
    QEventLoop loop;
    int exit = kOk;
    QElapsedTimer shown;
    shown.start();
    QObject::connect(&c, &hub::HubClient::progressed, &loop,
                     [&](qint64 done, qint64 total, const QString& file) {
                         if (shown.elapsed() < 1000 && done < total)
                             return;
                         shown.restart();
                         say(QStringLiteral("%1 of %2 (%3%)  %4")
                                 .arg(gigabytes(done), gigabytes(total))
                                 .arg(total > 0 ? 100 * done / total : 100)
                                 .arg(file));
                     });
    QObject::connect(&c, &hub::HubClient::downloaded, &loop,
                     [&](const QString& folder, int files, int fetched, qint64 bytes) {
                         say(QStringLiteral("%1: %2 files, %3 (%4 downloaded, the rest were in "
                                            "the cache); train it with --model hf:FOLDER")
                                 .arg(repo)
                                 .arg(files)
                                 .arg(gigabytes(bytes))
                                 .arg(fetched));
                         printOut(QDir::toNativeSeparators(folder));
                         loop.quit();
                     });
    QObject::connect(&c, &hub::HubClient::failed, &loop, [&](const QString& e) {
        printErr(e);
        exit = kFailed;
        loop.quit();
    });
    c.download(repo, revision);
    if (c.busy())
        loop.exec();
    return exit;
}

int list() {
    const QString cache = hub::cacheDir();
    const QList<hub::CachedModel> models = hub::cachedModels(cache);
    if (models.isEmpty())
        say(QStringLiteral("no models in %1").arg(QDir::toNativeSeparators(cache)));
    for (const hub::CachedModel& m : models)
        printOut(QStringLiteral("%1  %2  %3%4")
                     .arg(m.repoId.leftJustified(40), gigabytes(m.bytes).rightJustified(9),
                          QDir::toNativeSeparators(m.folder),
                          m.usable ? QString()
                                   : QStringLiteral("  (incomplete: no config.json "
                                                    "or no safetensors weights)")));
    return kOk;
}

int login(bool fromStdin) {
    if (!fromStdin)
        return usage(QStringLiteral("hub login reads the token from standard input: "
                                    "tandem hub login --stdin < token.txt"));
    QTextStream in(stdin);
    const auto where = hub::saveToken(in.readLine());
    if (!where)
        return fail(where.error());
    say(QStringLiteral("the token was saved in %1")
            .arg(*where == QLatin1String("keychain") ? QStringLiteral("the system's keychain")
                                                     : QDir::toNativeSeparators(*where)));
    return kOk;
}

} // namespace

int cmdHub(const QStringList& args) {
    Parser p;
    p.addPositionalArgument(QStringLiteral("ACTION"),
                            QStringLiteral("search TEXT, download ORG/NAME, list, login --stdin "
                                           "or logout."));
    p.addOption({QStringLiteral("revision"),
                 QStringLiteral("download: a branch, tag or commit [main]."),
                 QStringLiteral("REV")});
    p.addOption(
        {QStringLiteral("stdin"), QStringLiteral("login: read the token from standard input.")});
    int exit = kOk;
    if (!parse(p, QStringLiteral("hub"), args,
               QStringLiteral("Models from the Hugging Face Hub ($HF_ENDPOINT): search it, "
                              "download a model into its cache ($HF_HUB_CACHE, shared with "
                              "transformers), list the models there, and keep the access token "
                              "gated models need ($HF_TOKEN overrides it)."),
               &exit, true))
        return exit;
    const QStringList pos = p.positionalArguments();
    const QString action = pos.value(0);
    const bool wantsArg = action == QLatin1String("search") || action == QLatin1String("download");
    if (pos.size() != (wantsArg ? 2 : 1))
        return usage(QStringLiteral("hub needs one of: search TEXT, download ORG/NAME, list, "
                                    "login --stdin, logout (see 'tandem hub --help')"));
    if (action == QLatin1String("list"))
        return list();
    if (action == QLatin1String("login"))
        return login(p.isSet(QStringLiteral("stdin")));
    if (action == QLatin1String("logout")) {
        hub::forgetToken();
        say(QStringLiteral("the token was removed from the keychain and %1")
                .arg(QDir::toNativeSeparators(hub::tokenFile())));
        return kOk;
    }
    if (!wantsArg)
        return usage(QStringLiteral("hub: unknown action \"%1\"").arg(action));
    hub::HubClient c;
    c.setToken(hub::findToken().value);
    return action == QLatin1String("search")
               ? search(c, pos.at(1))
               : download(c, pos.at(1), p.value(QStringLiteral("revision")));
}

} // namespace tandem::cli
