import PackagePlugin
@main struct ResourcefulOpenAPIPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] { [] }
}
